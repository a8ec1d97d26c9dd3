# Issue 32 item 4 and 5: cordon serve as a cluster service. The harness
# example (examples/harness) against two local servers, one on a Unix
# socket and one on loopback TCP with TLS; the serve image
# (scripts/serve-image.sh) answering /v1/health in a podman container.
. "$(dirname "$0")/../lib.sh"

# Servers a test starts are stopped when it ends (an EXIT trap of the test's
# own subshell): SIGTERM, then SIGKILL after 10 s.
T_SERVERS=()
stop_servers() {
	local p i
	for p in "${T_SERVERS[@]}"; do
		kill -0 "$p" 2>/dev/null || continue
		kill -TERM "$p" 2>/dev/null
		for i in $(seq 1 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	return 0
}
# started PID READY-COMMAND...: until READY-COMMAND succeeds (a hang guard
# of 20 s, not a measurement).
started() {
	local pid=$1 i
	shift
	T_SERVERS+=("$pid")
	trap stop_servers EXIT
	for i in $(seq 1 400); do
		"$@" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	fail "a server did not start: $(cat "$T_TMP"/serve-*.log)"
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# A certificate for 127.0.0.1 and its key: $T_TMP/tls.{crt,key}.
make_cert() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T_TMP/tls.key" \
		-out "$T_TMP/tls.crt" -days 2 -subj /CN=cordon-serve -addext subjectAltName=IP:127.0.0.1 \
		>/dev/null 2>&1 && chmod 600 "$T_TMP/tls.key"
}
static_busybox() {
	local b
	b=$(command -v busybox) && ldd "$b" 2>&1 | grep -q 'not a dynamic'
}

test_harness_spreads_tasks_over_two_servers() {
	command -v python3 >/dev/null || { t_skip "no python3"; return; }
	command -v openssl >/dev/null || { t_skip "no openssl to make a certificate"; return; }
	static_busybox || { t_skip "no static busybox for the tasks' image roots (busybox-static)"; return; }
	# The dataset below the workspace (755: a root's image root must be
	# searchable on the way, docs/images.md).
	"$TOP/examples/harness/make_dataset.sh" "$WS/ds" >"$T_TMP/ds.log" 2>&1 ||
		{ fail "make_dataset.sh: $(cat "$T_TMP/ds.log")"; t_assert; return; }
	make_cert || { fail "openssl req failed"; t_assert; return; }
	"$CORDON" serve --socket "$T_TMP/a.sock" --state-dir "$WS/sa" 2>"$T_TMP/serve-a.log" &
	started $! test -S "$T_TMP/a.sock" || { t_assert; return; }
	local port
	port=$(free_port)
	printf 'tok-0123456789abcdef-harness\n' >"$T_TMP/token"
	chmod 600 "$T_TMP/token"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	"$CORDON" serve --listen "127.0.0.1:$port" --token-file "$T_TMP/token" --ceiling "$T_TMP/ceiling.json" \
		--tls-cert "$T_TMP/tls.crt" --tls-key "$T_TMP/tls.key" --state-dir "$WS/sb" 2>"$T_TMP/serve-b.log" &
	started $! curl -sf --cacert "$T_TMP/tls.crt" "https://127.0.0.1:$port/v1/health" -o /dev/null ||
		{ t_assert; return; }
	local b="https://127.0.0.1:$port" out rc
	out=$(python3 "$TOP/examples/harness/harness.py" --dataset "$WS/ds" --server "$T_TMP/a.sock" --server "$b" \
		--token-file "$T_TMP/token" --ca "$T_TMP/tls.crt" --jobs 1 2>&1)
	rc=$?
	expect_eq "$rc" 0 "harness exit status ($out)"
	expect_match "$out" '^TASK +SERVER +BEFORE +AFTER +VERDICT' "the table's head"
	expect_eq "$(printf '%s\n' "$out" | grep -cE '^[a-z0-9-]+ +[^ ]+ +fail +pass +resolved$')" 4 "four tasks resolved ($out)"
	expect_match "$out" '^4 tasks: 4 resolved$' "the summary"
	expect_match "$out" "^tasks per server: $T_TMP/a.sock 2, $b 2\$" "the spread"
	# Both servers ran tasks (one at a time: the pool's servers in turn).
	expect_eq "$(printf '%s\n' "$out" | grep -cE "^[a-z0-9-]+ +$T_TMP/a.sock ")" 2 "two tasks on the socket server"
	expect_eq "$(printf '%s\n' "$out" | grep -cE "^[a-z0-9-]+ +$b ")" 2 "two tasks on the TLS server"
	# No patch: the same checks fail after as before.
	out=$(python3 "$TOP/examples/harness/harness.py" --dataset "$WS/ds" --server "$T_TMP/a.sock" --server "$b" \
		--token-file "$T_TMP/token" --ca "$T_TMP/tls.crt" --agent none -n 2 2>&1)
	expect_match "$out" '^2 tasks: 2 unresolved$' "without the fix ($out)"
	t_assert
}

t_run test_harness_spreads_tasks_over_two_servers
