#!/bin/bash
# make bench: start-up cost of a sandboxed /bin/true, cordon beside bubblewrap
# in one run, and the supervisor's peak RSS. Figures are wall-clock times per
# run (median / p90 / mean over N runs) on this machine.
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
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

row() { # NAME [VAR=VALUE...] CMD...: variables go to the environment, not to an extra exec
	local name=$1
	shift
	local envs=()
	while [[ "$1" == *=* && "$1" != /* ]]; do envs+=("$1"); shift; done
	read -r med p90 mean < <(env "${envs[@]}" "$S" "$N" "$@")
	printf '%-46s %9s %9s %9s\n' "$name" "$med" "$p90" "$mean"
	echo "$med" >"$ws/.m.$(echo "$name" | tr -c 'a-z0-9' _)"
}
med_of() { cat "$ws/.m.$(echo "$1" | tr -c 'a-z0-9' _)"; }

echo "start-up of /bin/true, $N runs each (ms; this VM: a bare fork+exit+wait costs ~0.9 ms)"
printf '%-46s %9s %9s %9s\n' "" median p90 mean
row "bare /bin/true" /bin/true
row "bwrap (all namespaces, minimal root)" /usr/bin/bwrap "${bwrap_args[@]}" /bin/true
row "cordon run (no limits; accounting cgroup)" "$C" run -- /bin/true
row "cordon run (no cgroup: CORDON_CGROUP=none)" CORDON_CGROUP=none "$C" run -- /bin/true
row "cordon run --memory-limit 64M --pids-limit 64" "$C" run --memory-limit 64M --pids-limit 64 -- /bin/true
if grep -q cgroup2 /proc/self/mountinfo; then
	row "cordon run (v2 backend, clone3 INTO_CGROUP)" CORDON_CGROUP=v2 "$C" run -- /bin/true
fi
echo '{"report_file_denials": false}' >"$ws/nofile.json"
row "cordon run, file observer off" "$C" run --policy "$ws/nofile.json" -- /bin/true
echo
echo "python3 -c pass, $((N / 4)) runs each (ms)"
N=$((N / 4))
row "bare python3" /usr/bin/python3 -c pass
row "bwrap python3" /usr/bin/bwrap "${bwrap_args[@]}" /usr/bin/python3 -c pass
row "cordon run python3" "$C" run -- /usr/bin/python3 -c pass
row "cordon run python3, file observer off" "$C" run --policy "$ws/nofile.json" -- /usr/bin/python3 -c pass
echo
"$BUILD/bench-layers" 200

# cordon serve (issue 18): an exec in a live session, a one-shot run and a
# session's whole life (create + delete), each a request from a minimal C
# client over the Unix socket, beside the cold rows above.
echo
echo "cordon serve, /bin/true, $N requests each (ms; beside: cold cordon run and bwrap above)"
echo "start-to-exec: median of the exec's usage.start_to_exec_seconds, from the moment the server had"
echo "the whole request to the command's execve inside the boundary (- where there is no exec)"
printf '%-46s %9s %9s %9s %13s\n' "" median p90 mean start-to-exec
"$C" serve --socket "$ws/serve.sock" --state-dir "$ws/state" --max-sessions 8 --keep-runs 10 2>/dev/null &
srv=$!
for _ in $(seq 1 100); do [ -S "$ws/serve.sock" ] && break; sleep 0.05; done
sid=$(curl -s --unix-socket "$ws/serve.sock" -X POST http://b/v1/sessions -d '{}' | sed 's/.*"id":"\([^"]*\)".*/\1/')
srow() { # NAME ARGS...
	local name=$1 med p90 mean s2e
	shift
	read -r med p90 mean s2e < <("$BUILD/bench-serve" "$ws/serve.sock" "$N" "$@")
	printf '%-46s %9s %9s %9s %13s\n' "$name" "$med" "$p90" "$mean" "$s2e"
	echo "$med" >"$ws/.m.$(echo "$name" | tr -c 'a-z0-9' _)"
}
srow "serve: exec in a live session" exec "$sid"
srow "serve: one-shot POST /v1/runs" run
srow "serve: session create + delete" session
# The warm pool (--warm 2) beside the cold server, both up at once: each
# create waits (untimed) for the pool to be full again, so every warm row
# is a session taken from the pool, every cold row one built on request.
"$C" serve --socket "$ws/warm.sock" --state-dir "$ws/wstate" --max-sessions 8 --warm 2 2>/dev/null &
wsrv=$!
for _ in $(seq 1 100); do [ -S "$ws/warm.sock" ] && break; sleep 0.05; done
wrow() { # NAME SOCK ARGS...
	local name=$1 sock=$2 med p90 mean s2e
	shift 2
	read -r med p90 mean s2e < <("$BUILD/bench-serve" "$sock" "$N" "$@")
	printf '%-46s %9s %9s %9s %13s\n' "$name" "$med" "$p90" "$mean" "$s2e"
	echo "$med" >"$ws/.m.$(echo "$name" | tr -c 'a-z0-9' _)"
}
wrow "serve: session create, cold" "$ws/serve.sock" create
wrow "serve: session create, warm pool" "$ws/warm.sock" create
wrow "serve: create + exec /bin/true, cold" "$ws/serve.sock" create-exec
wrow "serve: create + exec /bin/true, warm pool" "$ws/warm.sock" create-exec
wrow "serve: one-shot POST /v1/runs, warm pool" "$ws/warm.sock" run
kill -TERM "$srv" "$wsrv"
wait "$srv" || true
wait "$wsrv" || true
awk -v c="$(med_of "serve: session create, cold")" -v w="$(med_of "serve: session create, warm pool")" \
	'BEGIN{printf "session create, cold / warm (median):            %.2f\n", c/w}'
awk -v c="$(med_of "serve: create + exec /bin/true, cold")" -v w="$(med_of "serve: create + exec /bin/true, warm pool")" \
	-v b="$(med_of "bwrap (all namespaces, minimal root)")" -v r="$(med_of "cordon run (no limits; accounting cgroup)")" \
	'BEGIN{printf "one-shot /bin/true, warm vs cold session / cold cordon run / bwrap: %.2f / %.2f / %.2f\n", w/c, w/r, w/b}'
awk -v w="$(med_of "serve: one-shot POST /v1/runs, warm pool")" -v c="$(med_of "serve: one-shot POST /v1/runs")" \
	-v r="$(med_of "cordon run (no limits; accounting cgroup)")" -v b="$(med_of "bwrap (all namespaces, minimal root)")" \
	'BEGIN{printf "one-shot POST /v1/runs, warm / cold server / cold cordon run / bwrap: %.2f / %.2f / %.2f\n", w/c, w/r, w/b}'
awk -v s="$(med_of "serve: session create + delete")" 'BEGIN{printf "sessions per second, one client (median):        %.0f\n", 1000 / s}'
awk -v a="$(med_of "serve: exec in a live session")" -v b="$(med_of "bwrap (all namespaces, minimal root)")" -v c="$(med_of "cordon run (no limits; accounting cgroup)")" \
	'BEGIN{printf "exec in a session vs cold cordon run / bwrap:    %.2f / %.2f\n", a/c, a/b}'

# Egress (issue 4): 1 GiB through the proxy vs the same transfer direct on
# loopback, and the added latency of a new connection (connect + CONNECT +
# 1-byte echo). Beside them, a minimal relay with no sandbox at all (one
# thread per direction, plain read/write or splice): what any user-space
# relay costs on this machine. Rounds alternate, so that drift in the VM's
# speed falls on every row alike; the figure is the median of the rounds.
NB="$BUILD/bench-net"
ROUNDS=${BENCH_NET_ROUNDS:-5}
"$NB" serve-bulk "$ws/bulk.port" 1073741824 &
srv=($!)
"$NB" serve-echo "$ws/echo.port" &
srv+=($!)
"$NB" serve-relay "$ws/rcopy.port" copy &
srv+=($!)
"$NB" serve-relay "$ws/rsplice.port" splice &
srv+=($!)
for _ in $(seq 50); do
	[ -s "$ws/bulk.port" ] && [ -s "$ws/echo.port" ] && [ -s "$ws/rcopy.port" ] && [ -s "$ws/rsplice.port" ] && break
	sleep 0.1
done
BP=$(cat "$ws/bulk.port"); EP=$(cat "$ws/echo.port"); RC=$(cat "$ws/rcopy.port"); RS=$(cat "$ws/rsplice.port")
median() { sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
printf '{"network": {"allow": ["127.0.0.1:%s", "127.0.0.1:%s"], "transparent": true}}' "$BP" "$EP" >"$ws/transparent.json"
for r in $(seq "$ROUNDS"); do
	"$NB" fetch "$BP" >>"$ws/t.direct"
	"$NB" fetch "$BP" "$RC" >>"$ws/t.rcopy"
	"$NB" fetch "$BP" "$RS" >>"$ws/t.rsplice"
	"$C" run --ro "$BUILD" --net "127.0.0.1:$BP" -- "$NB" fetch "$BP" 3128 >>"$ws/t.cordon"
	"$NB" latency "$EP" 300 >>"$ws/l.direct"
	"$NB" latency "$EP" 300 "$RC" >>"$ws/l.rcopy"
	"$NB" latency "$EP" 300 "$RS" >>"$ws/l.rsplice"
	"$C" run --ro "$BUILD" --net "127.0.0.1:$EP" -- "$NB" latency "$EP" 300 3128 >>"$ws/l.cordon"
	# network.transparent (issue 33): the program connects straight to the
	# endpoint; the supervisor makes the connection and hands the socket in
	"$C" run --ro "$BUILD" --policy "$ws/transparent.json" -- "$NB" fetch "$BP" >>"$ws/t.transparent" || echo 0 >>"$ws/t.transparent"
	"$C" run --ro "$BUILD" --policy "$ws/transparent.json" -- "$NB" latency "$EP" 300 >>"$ws/l.transparent" || echo 0 >>"$ws/l.transparent"
done
kill "${srv[@]}" 2>/dev/null
wait "${srv[@]}" 2>/dev/null || true
echo
echo "egress, $ROUNDS alternating rounds (1 GiB: MB/s; a new connection: us, median of round medians)"
printf '%-46s %9s %9s\n' "" "MB/s" "latency"
for k in direct:"direct on loopback" rcopy:"minimal relay, no sandbox (read/write)" \
	rsplice:"minimal relay, no sandbox (splice)" cordon:"cordon run --net (proxy, splice)" \
	transparent:"cordon run, network.transparent (handed in)"; do
	printf '%-46s %9s %9s\n' "${k#*:}" "$(median <"$ws/t.${k%%:*}")" "$(cut -d' ' -f1 "$ws/l.${k%%:*}" | median)"
done
td=$(median <"$ws/t.direct"); tc=$(median <"$ws/t.cordon"); trc=$(median <"$ws/t.rcopy"); trs=$(median <"$ws/t.rsplice")
ld=$(cut -d' ' -f1 "$ws/l.direct" | median); lc=$(cut -d' ' -f1 "$ws/l.cordon" | median)
lrc=$(cut -d' ' -f1 "$ws/l.rcopy" | median)
awk -v a="$tc" -v b="$td" 'BEGIN{printf "throughput ratio proxy/direct:                   %.2f (goal >= 0.80)\n", a/b}'
awk -v a="$trc" -v s="$trs" -v b="$td" 'BEGIN{printf "  the minimal relays on this machine:             %.2f (read/write), %.2f (splice)\n", a/b, s/b}'
awk -v a="$lc" -v b="$ld" 'BEGIN{printf "added latency per connection (median):           %d us (goal < 200 us)\n", a-b}'
awk -v a="$lrc" -v b="$ld" 'BEGIN{printf "  the minimal relay (read/write) adds:            %d us\n", a-b}'
tt=$(median <"$ws/t.transparent"); lt=$(cut -d' ' -f1 "$ws/l.transparent" | median)
awk -v a="$tt" -v b="$td" 'BEGIN{printf "throughput ratio transparent/direct:             %.2f (goal >= 0.80)\n", a/b}'
awk -v a="$lt" -v b="$ld" 'BEGIN{printf "added latency per connection, transparent:       %d us\n", a-b}'
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
# Cost per run (issue 34): wall and CPU, pairwise ratios beside bubblewrap.
echo
python3 "$HERE/cost.py" "$BUILD"
bash "$HERE/relay.sh" "$BUILD"
bash "$HERE/workspace.sh" "$BUILD"
bash "$HERE/tls.sh" "$BUILD"
bash "$HERE/refused.sh" "$BUILD"
echo
echo "snapshot, restore and fork of a session (issue 38)"
bash "$HERE/snapshot.sh" "$BUILD"
if [ -x "$BUILD/cordon-oci" ]; then bash "$HERE/oci.sh" "$BUILD"; fi
