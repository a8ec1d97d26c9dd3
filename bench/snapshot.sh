#!/bin/bash
# Snapshot, restore and fork of a session (issue 38's cost goal): a session
# whose workspace holds N files (BENCH_FILES, default 50,000) in its lower
# tree and C changed files (BENCH_CHANGES, default 100), against the same
# with no change. The lower tree is a fork's start (a session's own
# workspace starts empty). Times: the HTTP call, median of R runs
# (BENCH_RUNS, default 5), ms.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
N=${BENCH_FILES:-50000}
C=${BENCH_CHANGES:-100}
R=${BENCH_RUNS:-5}
d=$(mktemp -d /var/tmp/cordon-bench-snap.XXXXXX)
"$BUILD/cordon" serve --socket "$d/s.sock" --state-dir "$d/state" 2>"$d/serve.log" &
srv=$!
trap 'kill $srv 2>/dev/null; wait $srv 2>/dev/null; rm -rf "$d"' EXIT
for _ in $(seq 200); do [ -S "$d/s.sock" ] && break; sleep 0.05; done
api() { curl -sS --unix-socket "$d/s.sock" --max-time 600 "$@"; }
ms() { curl -sS --unix-socket "$d/s.sock" --max-time 600 -o /dev/null -w '%{time_total}' "$@" | awk '{printf "%.1f", $1 * 1000}'; }
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
sh_in() { api -X POST "http://cordon/v1/sessions/$1/exec" -d "{\"argv\":[\"sh\",\"-c\",\"$2\"]}" >/dev/null; }
id_of() { jq -r "$1"; }

# the big tree: made in a session, forked: the fork's lower tree holds it
p=$(api -X POST http://cordon/v1/sessions -d '{}' | id_of .id)
sh_in "$p" "mkdir -p t && cd t && i=0; while [ \$i -lt $N ]; do echo \$i >f\$i; i=\$((i+1)); done"
big=$(api -X POST "http://cordon/v1/sessions/$p/fork" | id_of .id)
empty=$(api -X POST http://cordon/v1/sessions -d '{}' | id_of .id)
sh_in "$big" "cd t && i=0; while [ \$i -lt $C ]; do echo changed >f\$i; i=\$((i+1)); done"
sh_in "$empty" "i=0; while [ \$i -lt $C ]; do echo changed >g\$i; i=\$((i+1)); done"

printf '%-52s %9s\n' "(ms, median of $R)" median
for s in "$empty:empty workspace, $C changed files" "$big:$N-file workspace, $C changed files"; do
	sid=${s%%:*}
	name=${s#*:}
	snap=$(for _ in $(seq "$R"); do ms -X POST "http://cordon/v1/sessions/$sid/snapshots"; echo; done | med)
	printf '%-52s %9s\n' "snapshot: $name" "$snap"
	first=$(api "http://cordon/v1/sessions/$sid/snapshots" | jq -r '.snapshots[0].snapshot')
	for q in $(api "http://cordon/v1/sessions/$sid/snapshots" | jq -r '.snapshots[1:][].snapshot'); do
		api -X DELETE "http://cordon/v1/sessions/$sid/snapshots/$q" >/dev/null
	done
	rest=$(for _ in $(seq "$R"); do ms -X POST "http://cordon/v1/sessions/$sid/restore" -d "{\"snapshot\":\"$first\"}"; echo; done | med)
	printf '%-52s %9s\n' "restore: $name" "$rest"
	fk=$(for _ in $(seq "$R"); do
		out=$(curl -sS --unix-socket "$d/s.sock" -w ' %{time_total}' -X POST "http://cordon/v1/sessions/$sid/fork" -d "{\"snapshot\":\"$first\"}")
		api -X DELETE "http://cordon/v1/sessions/$(printf '%s' "${out% *}" | id_of .id)" >/dev/null
		awk -v t="${out##* }" 'BEGIN {printf "%.1f\n", t * 1000}'
	done | med)
	printf '%-52s %9s\n' "fork: $name" "$fk"
done

# A level deeper: the big workspace (itself a fork) forked, C files
# changed in that fork, which is then forked at a snapshot (a server as
# root stacks a fork's snapshot over its parent's layers: O(changes);
# elsewhere its parent's lower tree is copied, the snapshot's view over
# it: O(tree)).
ff=$(api -X POST "http://cordon/v1/sessions/$big/fork" | id_of .id)
sh_in "$ff" "cd t && i=0; while [ \$i -lt $C ]; do echo again >f\$((i+$C)); i=\$((i+1)); done"
fsnap=$(api -X POST "http://cordon/v1/sessions/$ff/snapshots" | id_of .snapshot)
fk=$(for _ in $(seq "$R"); do
	out=$(curl -sS --unix-socket "$d/s.sock" -w ' %{time_total}' -X POST "http://cordon/v1/sessions/$ff/fork" -d "{\"snapshot\":\"$fsnap\"}")
	api -X DELETE "http://cordon/v1/sessions/$(printf '%s' "${out% *}" | id_of .id)" >/dev/null
	awk -v t="${out##* }" 'BEGIN {printf "%.1f\n", t * 1000}'
done | med)
printf '%-52s %9s\n' "fork, a level deeper: $N files, $C changed" "$fk"
