#!/bin/bash
# What a run's seccomp notifications cost the supervisor (lib/notify-budget.h).
# A run makes N denied calls (mount(2) in a loop: probe-hostile denied-loop),
# then M observed calls (open(2) of a file it may read, each answered
# CONTINUE). For each: the run's wall time, the supervisor's own CPU
# (utime + stime of the cordon process, children apart, /proc/PID/stat, read
# while the run waits at its end), that CPU per second of the run, and the
# report's usage.notifications. With a second cordon binary (one without the
# budget: cp build/cordon from the commit before), both side by side.
#   bash bench/notify.sh [BUILD] [OTHER_CORDON]
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
OTHER=${2:-}
N=${BENCH_NOTIFY_DENIALS:-20000}
M=${BENCH_NOTIFY_OPENS:-50000}
ws=$(mktemp -d /tmp/cordon-bench-notify.XXXXXX)
trap 'rm -rf "$ws"' EXIT
cd "$ws"
hz=$(getconf CLK_TCK)

# measure CORDON NAME CMD...: one run; prints a row
measure() {
	local c=$1 name=$2
	shift 2
	rm -f done end r.json
	local t0 t1
	t0=$(date +%s.%N)
	"$c" run --workspace-mode direct --ro "$BUILD" --report r.json -- /bin/sh -c \
		'"$@" >/dev/null; : >done; while [ ! -e end ]; do sleep 0.05; done' sh "$@" &
	local sup=$!
	until [ -e done ]; do sleep 0.02; done
	t1=$(date +%s.%N)
	local ut st
	read -r ut st < <(awk '{print $14, $15}' /proc/$sup/stat)
	touch end
	wait $sup || true
	local n
	n=$(jq -r '.usage.notifications // {} | "\(.answered // "-") \(.throttled // "-") \(.held_seconds // "-")"' r.json)
	awk -v u="$ut" -v s="$st" -v hz="$hz" -v t0="$t0" -v t1="$t1" -v name="$name" -v n="$n" \
		-v ru="$(jq .usage.cpu_user_seconds r.json)" -v rs="$(jq .usage.cpu_system_seconds r.json)" \
		'BEGIN{split(n, a, " "); w = t1 - t0; c = (u + s) / hz;
		printf "%-34s %7.2f %8.2f %8.2f %6.0f%% %8s %8s %7s\n", name, w, ru + rs, c, 100 * c / w, a[1], a[2], (a[3] == "-" ? "-" : sprintf("%.2f", a[3]))}'
}

echo "seccomp notifications: $N denied calls, then $M observed opens, one run each"
echo "(wall: the run's, s; run CPU: its report's; supervisor: its own CPU, s, and per second of the run)"
printf '%-34s %7s %8s %8s %7s %8s %8s %7s\n' "" wall "run CPU" "sup CPU" "sup/s" answered throttl held_s
for c in "$BUILD/cordon" ${OTHER:+"$OTHER"}; do
	label=$([ "$c" = "$BUILD/cordon" ] && echo "budget" || echo "other")
	measure "$c" "$label: denied mount() x$N" "$BUILD/probe-hostile" denied-loop "$N"
	measure "$c" "$label: observed open() x$M" /usr/bin/python3 -c \
		"import os
for _ in range($M): os.close(os.open('/etc/hostname', os.O_RDONLY))"
done
