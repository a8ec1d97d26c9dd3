#!/bin/bash
# bench/compare.sh OLD_BUILD NEW_BUILD: the start-up of a sandboxed /bin/true
# by two builds of cordon, side by side, in interleaved rounds (old, new,
# old, new...) so that a change of load hits both alike. Per round and
# build, N runs through bench-spawn: the median wall time of a run, and from
# /usr/bin/time over the N runs the CPU (user + system) and minor page faults
# per run (waited-for children: the supervisor, init and the command). CPU
# and faults hold under load; wall time does not. Not part of make bench.
#
#   ROUNDS=5 RUNS=60 OLD_ARGS= NEW_ARGS='--workspace-mode direct' \
#     bash bench/compare.sh /tmp/old/build build
#
# OLD_ARGS / NEW_ARGS go after "run" (a flag the old build lacks stays off
# its side). The workspace is a fresh directory under /tmp.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bench/compare.sh OLD_BUILD NEW_BUILD" >&2; exit 2; }
OLD=$(cd "$1" && pwd)
NEW=$(cd "$2" && pwd)
ROUNDS=${ROUNDS:-5}
N=${RUNS:-60}
read -r -a oargs <<<"${OLD_ARGS:-}"
read -r -a nargs <<<"${NEW_ARGS:-}"
S="$NEW/bench-spawn"
[ -x "$S" ] || S="$OLD/bench-spawn"
for b in "$OLD" "$NEW"; do [ -x "$b/cordon" ] || { echo "compare: no $b/cordon" >&2; exit 2; }; done
ws=$(mktemp -d /tmp/cordon-compare.XXXXXX)
trap 'rm -rf "$ws"' EXIT
cd "$ws"

one() { # BUILD ARGS... -> "wall_median_ms cpu_ms_per_run faults_per_run"
	local b=$1 med p90 mean u s f
	shift
	read -r med p90 mean u s f < <({ /usr/bin/time -f '%U %S %R' -o "$ws/.t" "$S" "$N" "$b/cordon" run "$@" -- /bin/true; } | tr '\n' ' '; cat "$ws/.t")
	awk -v m="$med" -v u="$u" -v s="$s" -v f="$f" -v n="$N" 'BEGIN { printf "%.2f %.3f %.1f\n", m, (u + s) * 1000 / n, f / n }'
}

echo "start-up of /bin/true: $ROUNDS interleaved rounds of $N runs; $(uptime | sed 's/.*load/load/')"
echo "  old: $OLD/cordon run ${oargs[*]:-}"
echo "  new: $NEW/cordon run ${nargs[*]:-}"
printf '%-6s %12s %12s %12s   %12s %12s %12s\n' round "old wall ms" "old cpu ms" "old faults" "new wall ms" "new cpu ms" "new faults"
: >"$ws/.old"
: >"$ws/.new"
for r in $(seq 1 "$ROUNDS"); do
	o=$(one "$OLD" "${oargs[@]}")
	n=$(one "$NEW" "${nargs[@]}")
	echo "$o" >>"$ws/.old"
	echo "$n" >>"$ws/.new"
	read -r ow oc of <<<"$o"
	read -r nw nc nf <<<"$n"
	printf '%-6s %12s %12s %12s   %12s %12s %12s\n' "$r" "$ow" "$oc" "$of" "$nw" "$nc" "$nf"
done
# The median over the rounds of each figure, and new / old.
med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-20s %12s %12s %8s\n' "median of rounds" old new new/old
for k in 1 2 3; do
	name=$(echo "wall ms (median)|cpu ms per run|minor faults per run" | cut -d'|' -f"$k")
	o=$(cut -d' ' -f"$k" "$ws/.old" | med)
	n=$(cut -d' ' -f"$k" "$ws/.new" | med)
	awk -v name="$name" -v o="$o" -v n="$n" 'BEGIN { printf "%-20s %12.2f %12.2f %8.3f\n", name, o, n, (o > 0 ? n / o : 0) }'
done
echo "after: $(uptime | sed 's/.*load/load/')"
