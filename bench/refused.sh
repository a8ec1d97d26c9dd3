#!/bin/bash
# Issue 27.8: what a run's refused connects cost the supervisor. The run
# makes 50,000 connects to distinct loopback ports nobody listens on (each
# one a seccomp notification the supervisor answers and reports); the
# supervisor's own CPU (utime + stime of the cordon process, children
# apart, from /proc/PID/stat) beside the run's (the report's usage).
# Goal: under 5 s of supervisor CPU (it was 8.9 s for 5,000 when every
# connect read /proc/PID/net/tcp and tcp6).
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
C="$BUILD/cordon"
N=${BENCH_REFUSED:-50000}
ws=$(mktemp -d /tmp/cordon-bench-refused.XXXXXX)
trap 'rm -rf "$ws"' EXIT
cd "$ws"
"$C" run --workspace-mode direct --report r.json -- /usr/bin/python3 -c "
import os, socket, time
for p in range($N):
    s = socket.socket()
    try: s.connect(('127.0.0.1', 1024 + p % 64000))
    except OSError: pass
    s.close()
open('done', 'w').close()
while not os.path.exists('end'): time.sleep(0.01)" &
sup=$!
until [ -e done ]; do sleep 0.1; done
read -r ut st < <(awk '{print $14, $15}' /proc/$sup/stat)
touch end
wait $sup || true
hz=$(getconf CLK_TCK)
echo
echo "refused loopback connects, $N distinct ports in one run (s of CPU)"
printf '%-46s %9s %9s\n' "" user system
awk -v u="$ut" -v s="$st" -v hz="$hz" 'BEGIN{printf "%-46s %9.2f %9.2f\n", "supervisor (cordon, children apart)", u/hz, s/hz}'
printf '%-46s %9.2f %9.2f\n' "the run (report usage)" "$(jq .usage.cpu_user_seconds r.json)" "$(jq .usage.cpu_system_seconds r.json)"
awk -v u="$ut" -v s="$st" -v hz="$hz" 'BEGIN{printf "supervisor CPU for the refused connects:         %.2f s (goal < 5 s)\n", (u+s)/hz}'
echo "network denials reported:                        $(jq '([.denials[] | select(.kind == "network") | .count] | add) + ([.. | objects | .count_omitted? // empty] | add // 0)' r.json)"
