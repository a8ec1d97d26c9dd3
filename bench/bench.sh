#!/bin/bash
# make bench: start-up cost of a sandboxed /bin/true, cordon beside bubblewrap
# in one run, and the supervisor's peak RSS. Figures are wall-clock times per
# run (median / p90 / mean over N runs) on this machine.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
N=${BENCH_RUNS:-300}
C="$BUILD/cordon"
S="$BUILD/bench-spawn"
ws=$(mktemp -d /tmp/cordon-bench.XXXXXX)
cd "$ws"
trap 'rm -rf "$ws"' EXIT

bwrap_args=(--unshare-all --die-with-parent --new-session --ro-bind /usr /usr --ro-bind /etc /etc
	--symlink usr/bin /bin --symlink usr/sbin /sbin --symlink usr/lib /lib --symlink usr/lib64 /lib64
	--proc /proc --dev /dev --tmpfs /tmp --bind "$ws" "$ws" --chdir "$ws" --clearenv
	--setenv PATH /usr/bin:/bin --uid 1000 --gid 1000 --cap-drop ALL)

row() { # NAME CMD...
	local name=$1
	shift
	read -r med p90 mean < <("$S" "$N" "$@")
	printf '%-46s %9s %9s %9s\n' "$name" "$med" "$p90" "$mean"
	echo "$med" >"$ws/.m.$(echo "$name" | tr -c 'a-z0-9' _)"
}
med_of() { cat "$ws/.m.$(echo "$1" | tr -c 'a-z0-9' _)"; }

echo "start-up of /bin/true, $N runs each (ms)"
printf '%-46s %9s %9s %9s\n' "" median p90 mean
row "bare /bin/true" /bin/true
row "bwrap (all namespaces, minimal root)" /usr/bin/bwrap "${bwrap_args[@]}" /bin/true
row "cordon run (no limits; accounting cgroup)" "$C" run -- /bin/true
row "cordon run (no cgroup: CORDON_CGROUP=none)" /usr/bin/env CORDON_CGROUP=none "$C" run -- /bin/true
row "cordon run --memory-limit 64M --pids-limit 64" "$C" run --memory-limit 64M --pids-limit 64 -- /bin/true
if grep -q cgroup2 /proc/self/mountinfo; then
	row "cordon run (cgroup v2 backend, clone3 INTO_CGROUP)" /usr/bin/env CORDON_CGROUP=v2 "$C" run -- /bin/true
fi
bw=$(med_of "bwrap (all namespaces, minimal root)")
cd_=$(med_of "cordon run (no limits; accounting cgroup)")
cn=$(med_of "cordon run (no cgroup: CORDON_CGROUP=none)")
echo
awk -v a="$cd_" -v b="$bw" 'BEGIN{printf "ratio cordon/bwrap (median, default run):        %.2f\n", a/b}'
awk -v a="$cn" -v b="$bw" 'BEGIN{printf "ratio cordon/bwrap (median, no cgroup):          %.2f\n", a/b}'

# Peak RSS of the supervisor while a run is under way.
"$C" run -- /bin/sleep 1 &
sup=$!
sleep 0.5
hwm=$(awk '/VmHWM/{print $2}' /proc/$sup/status)
wait $sup
echo "supervisor peak RSS (VmHWM, during a run):       ${hwm} KiB"
# Per-run report timings (from the report itself).
"$C" run --report "$ws/r.json" -- /bin/true
echo "setup_seconds of one run (clone to exec):        $(jq .usage.setup_seconds "$ws/r.json")"
