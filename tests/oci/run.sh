#!/bin/bash
# make test-oci: the OCI runtime-tools validation suite (58 TAP programs, one
# per test) against build/cordon-oci and against crun on the same host. See
# tests/oci/README.md.
#   bash tests/oci/run.sh [BUILD]
# Variables:
#   RUNTIME_TOOLS_TAR   the suite's source tarball (scripts/oci-setup.sh)
#   OCI_RUNTIMES        which runtimes, in order (default "crun cordon-oci"; "runc" too)
#   OCI_CRUN, OCI_RUNC, OCI_CORDON  their binaries (crun and runc on PATH, BUILD/cordon-oci)
#   OCI_PROGRAMS=REGEX  only the programs whose name (without .t) matches
#   OCI_TIMEOUT=S       per program (default 300: a hang guard, not a measurement)
#   OCI_KEEP=DIR        keep each program's output in DIR/RUNTIME/NAME.log
# A skip (no tarball, no runtime binary) is a failure under CI (CI set and
# not 0/false).
set -uo pipefail
BUILD=$(cd "${1:-build}" && pwd)
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$TOP/tests/oci
TIMEOUT=${OCI_TIMEOUT:-300}
case "${CI:-}" in "" | 0 | false | no) CI_MODE=0 ;; *) CI_MODE=1 ;; esac
FAILED=0
SKIPPED=0

say() { echo "oci: $*"; }
skip() { # REASON: counted; under CI it fails the target
	say "SKIP: $*"
	SKIPPED=$((SKIPPED + 1))
	[ "$CI_MODE" = 0 ] || { say "under CI a skip is a failure"; FAILED=1; }
}
# The lists: one program a line; '#' starts a comment (the reason).
list() { sed 's/#.*//; s/[[:space:]]//g' "$1" 2>/dev/null | grep . | sort -u; }

if [ "$(id -u)" != 0 ]; then
	skip "not root (the runtimes and the suite need root)"
	exit "$FAILED"
fi
err=$(mktemp)
CACHE=$(bash "$TOP/scripts/oci-setup.sh" 2>"$err")
rc=$?
if [ $rc = 2 ]; then
	skip "$(tail -1 "$err")"
	rm -f "$err"
	exit "$FAILED"
elif [ $rc != 0 ] || [ -z "$CACHE" ]; then
	cat "$err" >&2
	say "building the validation suite failed (scripts/oci-setup.sh, status $rc)"
	rm -f "$err"
	exit 1
fi
rm -f "$err"
PROGS=()
for t in "$CACHE"/bin/validation/*.t; do
	n=$(basename "$t" .t)
	[ -z "${OCI_PROGRAMS:-}" ] || [[ $n =~ $OCI_PROGRAMS ]] || continue
	PROGS+=("$n")
done
TOTAL=${#PROGS[@]}
[ "$TOTAL" -gt 0 ] || { say "no validation programs in $CACHE/bin/validation"; exit 1; }

# A program passes when it exits 0, printed no "not ok" line, and, where it
# printed no "ok" line either, no YAML diagnostic with an "error" key (some
# print "1..0" and such a diagnostic on failure; an "ok" line's diagnostic
# may hold the error a runtime rightly gave; the *_fail programs print
# nothing and exit 0 when the runtime rightly refuses).
passed() { # LOG RC
	[ "$2" = 0 ] || return 1
	! grep -q '^not ok' "$1" || return 1
	grep -q '^ok' "$1" || ! grep -Eq '^[[:space:]]+"error":' "$1"
}

# attempt RUNTIME BINARY NAME [WRAPPER...]: one run of program NAME in a
# directory of its own (its bundles under TMPDIR there) with a state
# directory of its own (--root), so that whatever a failing program leaves
# is found and removed by the runtime itself. Sets RC (the program's
# status), OK (1 if it passed) and SECS.
attempt() {
	local name=$1 bin=$2 n=$3 d t0
	shift 3
	d=$(mktemp -d /tmp/cordon-oci-val.XXXXXX)
	chmod 755 "$d" # a container in a user namespace of its own must reach its bundle
	mkdir "$d/tmp" "$d/state"
	cp "$CACHE/run/runtimetest" "$CACHE"/run/rootfs-*.tar.gz "$d/"
	printf '#!/bin/sh\nexec %q --root %q "$@"\n' "$bin" "$d/state" >"$d/runtime"
	chmod 755 "$d/runtime"
	t0=$SECONDS
	(cd "$d" && TMPDIR=$d/tmp RUNTIME=$d/runtime timeout -k 10 "$TIMEOUT" "$@" "$CACHE/bin/validation/$n.t") >"$d/log" 2>&1 </dev/null
	RC=$?
	SECS=$((SECONDS - t0))
	OK=0
	passed "$d/log" $RC && OK=1
	if [ -n "${OCI_KEEP:-}" ]; then
		mkdir -p "$OCI_KEEP/$name"
		cp "$d/log" "$OCI_KEEP/$name/$n.log"
	fi
	# What the program left: containers (through the runtime, in the
	# namespace it ran in), then mounts under its directory.
	"$@" sh -c 'for c in $("$1" list -q 2>/dev/null); do "$1" delete --force "$c" >/dev/null 2>&1; done' sh "$d/runtime" </dev/null >/dev/null 2>&1
	awk -v w="$d/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$d"
}
why() { if [ "$RC" = 124 ] || [ "$RC" = 137 ]; then echo "timed out after ${TIMEOUT} s"; else echo "status $RC, $SECS s"; fi; }

# run_one RUNTIME BINARY [WRAPPER...]: every program; the pass list goes to
# $RES/RUNTIME. A program that fails gets one more attempt, said as such:
# some of the suite's programs race with themselves (poststart: the hook
# and the container's process append to one file, and the program wants
# the process's line first, which the spec does not promise), and lose on
# a loaded machine whatever the runtime does.
run_one() {
	local name=$1 bin=$2 n first
	shift 2
	: >"$RES/$name"
	for n in "${PROGS[@]}"; do
		attempt "$name" "$bin" "$n" "$@"
		if [ $OK = 1 ]; then
			echo "$n" >>"$RES/$name"
			echo "ok - $name $n"
			continue
		fi
		first=$(why)
		attempt "$name" "$bin" "$n" "$@"
		# The program that races with itself (poststart, above) lost twice
		# on a loaded machine in CI on 2026-12-06 (crun once): a third try.
		[ $OK = 1 ] || [ "$n" != poststart ] || attempt "$name" "$bin" "$n" "$@"
		if [ $OK = 1 ]; then
			echo "$n" >>"$RES/$name"
			echo "ok - $name $n (on a later attempt; the first: $first)"
		else
			echo "not ok - $name $n ($first; again: $(why))"
		fi
	done
}

# The cgroups the suite names (linux_cgroups_*: "/cgrouptest" and, below
# the runtime's own cgroup, "testdir/cgrouptest/container"): a runtime
# removes the container's own, not the parents it made. Empty ones are
# removed after each runtime (rmdir: never one in use).
cg_leftovers() {
	local mnt opts base d
	while read -r mnt opts; do
		base=$(awk -F: -v o="$opts" '
			o == "" && $1 == "0" && $2 == "" { print $3; exit }
			o != "" { n = split($2, c, ","); for (i = 1; i <= n; i++) if (("," o ",") ~ ("," c[i] ",")) { print $3; exit } }' /proc/self/cgroup)
		for d in "$base/testdir/cgrouptest/container" "$base/testdir/cgrouptest" "$base/testdir" /cgrouptest; do
			[ -d "$mnt$d" ] && rmdir "$mnt$d" 2>/dev/null
		done
	done < <(awk '$9 == "cgroup2" {print $5, ""} $9 == "cgroup" {print $5, $NF}' /proc/self/mountinfo)
	return 0
}

cg_leftovers # an earlier run's

RES=$(mktemp -d /tmp/cordon-oci-res.XXXXXX)
trap 'rm -rf "$RES"' EXIT
summary=()
for rt in ${OCI_RUNTIMES:-crun cordon-oci}; do
	case $rt in
	crun) bin=${OCI_CRUN:-$(command -v crun || echo /usr/bin/crun)}; wrap=("$TOP/scripts/oci-hybrid-ns.sh") ;;
	runc) bin=${OCI_RUNC:-$(command -v runc || echo /usr/sbin/runc)}; wrap=() ;;
	cordon-oci) bin=${OCI_CORDON:-$BUILD/cordon-oci}; wrap=() ;;
	*) say "unknown runtime '$rt' in OCI_RUNTIMES (crun, runc, cordon-oci)"; exit 1 ;;
	esac
	if [ ! -x "$bin" ]; then
		skip "no $rt at $bin"
		summary+=("$rt skipped")
		continue
	fi
	say "$rt ($bin): $TOTAL programs"
	run_one "$rt" "$bin" "${wrap[@]}"
	cg_leftovers
	say "$rt passes: $(paste -sd' ' "$RES/$rt")"
	summary+=("$rt $(wc -l <"$RES/$rt")/$TOTAL")
done

# crun against the list checked in: a difference is the host's, said, not a
# failure (cordon-oci is held to the list, not to this run of crun).
sel() { if [ -n "${OCI_PROGRAMS:-}" ]; then grep -E "^($OCI_PROGRAMS)\$"; else cat; fi; }
want=$(list "$HERE/crun-passes.txt" | sel)
if [ -f "$RES/crun" ]; then
	d=$(comm -3 <(echo "$want" | grep .) <(sort "$RES/crun"))
	[ -z "$d" ] || say "note: crun here differs from tests/oci/crun-passes.txt: $(comm -23 <(echo "$want" | grep .) <(sort "$RES/crun") | sed 's/^/-/' | paste -sd' ') $(comm -13 <(echo "$want" | grep .) <(sort "$RES/crun") | sed 's/^/+/' | paste -sd' ')"
fi
# cordon-oci: every program crun passes, less what cordon refuses on purpose
# and what is still pending (a ratchet to shrink to nothing).
if [ -f "$RES/cordon-oci" ]; then
	refuses=$(list "$HERE/cordon-refuses.txt")
	pending=$(list "$HERE/cordon-pending.txt")
	got=$(sort "$RES/cordon-oci")
	for n in $want; do
		if grep -qx "$n" <<<"$got"; then
			grep -qx "$n" <<<"$pending" && say "pending list can shrink: $n passes now (remove it from tests/oci/cordon-pending.txt)"
			grep -qx "$n" <<<"$refuses" && say "note: $n passes though tests/oci/cordon-refuses.txt lists it"
		elif grep -qx "$n" <<<"$refuses"; then
			:
		elif grep -qx "$n" <<<"$pending"; then
			say "pending: $n"
		else
			say "FAIL: cordon-oci fails $n, which crun passes (not in cordon-refuses.txt or cordon-pending.txt)"
			FAILED=1
		fi
	done
fi
say "$(IFS=,; echo "${summary[*]}" | sed 's/,/, /g')$([ "$SKIPPED" = 0 ] || echo " ($SKIPPED skipped)")"
exit "$FAILED"
