# Issue 37: cordon as system software: serve under systemd's socket
# activation (the socket passed as systemd passes it: tests/sd_activate.py),
# the units in deploy/systemd/ (docs/install.md).
. "$(dirname "$0")/../lib.sh"

SRV=""
stop_srv() { [ -n "$SRV" ] && { kill -TERM "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; }; SRV=""; }
# wait_log WHAT: until the server's log has a line matching WHAT (guard 60 s)
wait_log() {
	local i
	for i in $(seq 1 600); do
		grep -q -- "$1" "$T_TMP/serve.log" 2>/dev/null && return 0
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.1
	done
	fail "the server did not say '$1': $(cat "$T_TMP/serve.log")"
}

# The Unix socket systemd made is the one served (the same inode), a session
# runs through it, and it is still there after the server stops (systemd's,
# which RemoveOnStop= removes, not the server).
test_socket_activation_unix() {
	local sock=$T_TMP/serve.sock ino out
	trap stop_srv EXIT
	python3 "$TOP/tests/sd_activate.py" unix "$sock" -- "$CORDON" serve --socket "$sock" \
		--state-dir "$WS/state" 2>"$T_TMP/serve.log" &
	SRV=$!
	wait_log "listening on $sock (socket activation)" || { t_assert; return 1; }
	ino=$(stat -c %i "$sock")
	out=$(curl -s --unix-socket "$sock" http://cordon/v1/health)
	expect_match "$out" '"ready"' "health through the passed socket"
	out=$(curl -s --unix-socket "$sock" -X POST -d '{"argv": ["/bin/echo", "activated"]}' http://cordon/v1/runs)
	expect_match "$out" 'activated' "a run through the passed socket: $out"
	expect_eq "$(stat -c %i "$sock")" "$ino" "the socket file is systemd's (not rebound)"
	stop_srv
	[ -S "$sock" ] || fail "the server removed systemd's socket on stop"
	t_assert
}

test_socket_activation_tcp() {
	local tok=tok-0123456789abcdef-activ out port
	printf '%s\n' "$tok" >"$T_TMP/token"
	chmod 600 "$T_TMP/token"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json" # a root server admitting token holders
	trap stop_srv EXIT
	python3 "$TOP/tests/sd_activate.py" tcp 127.0.0.1 "$T_TMP/port" -- "$CORDON" serve --listen "127.0.0.1:@PORT@" \
		--token-file "$T_TMP/token" --ceiling "$T_TMP/ceiling.json" --state-dir "$WS/state" 2>"$T_TMP/serve.log" &
	SRV=$!
	for _ in $(seq 1 100); do [ -s "$T_TMP/port" ] && break; sleep 0.1; done
	port=$(cat "$T_TMP/port")
	wait_log "listening on 127.0.0.1:$port (socket activation)" || { t_assert; return 1; }
	out=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/sessions")
	expect_eq "$out" 401 "no token: refused"
	out=$(curl -s -H "Authorization: Bearer $tok" "http://127.0.0.1:$port/v1/health")
	expect_match "$out" '"ready"' "health over the passed TCP socket"
	t_assert
}

# A socket that is not the one the options name is refused in one line, and
# the server does not start; LISTEN_PID of another process is not ours: the
# server binds its own socket.
test_socket_activation_mismatch() {
	local out rc
	out=$(timeout -k 5 60 python3 "$TOP/tests/sd_activate.py" unix "$T_TMP/other.sock" -- "$CORDON" serve \
		--socket "$T_TMP/serve.sock" --state-dir "$WS/state" 2>&1)
	rc=$?
	expect_eq "$rc" 1 "exit status of a mismatched socket"
	expect_match "$out" "^cordon serve: socket activation: the socket passed is bound at $T_TMP/other.sock, not --socket $T_TMP/serve.sock\$" "the error line"
	[ -e "$T_TMP/serve.sock" ] && fail "a socket was made at --socket"
	out=$(timeout -k 5 60 python3 "$TOP/tests/sd_activate.py" tcp 127.0.0.1 "$T_TMP/port" -- "$CORDON" serve \
		--socket "$T_TMP/serve.sock" --state-dir "$WS/state" 2>&1)
	expect_match "$out" "socket activation: the socket passed is not a Unix socket, not --socket" "a TCP socket for --socket"
	trap stop_srv EXIT
	python3 "$TOP/tests/sd_activate.py" --pid 1 unix "$T_TMP/third.sock" -- "$CORDON" serve \
		--socket "$T_TMP/serve.sock" --state-dir "$WS/state" 2>"$T_TMP/serve.log" &
	SRV=$!
	wait_log "listening on $T_TMP/serve.sock\$" || { t_assert; return 1; }
	[ -S "$T_TMP/serve.sock" ] || fail "LISTEN_PID of another process: the server's own socket"
	t_assert
}

# The units parse, and their ExecStart is a command line cordon serve takes
# (systemd-analyze verify, where systemd is installed).
test_units_verify() {
	command -v systemd-analyze >/dev/null || { t_skip "no systemd-analyze"; return; }
	local d=$T_TMP/units out
	mkdir -p "$d"
	cp "$TOP/deploy/systemd/cordon-serve.socket" "$d/"
	sed "s|/usr/bin/cordon |$CORDON |" "$TOP/deploy/systemd/cordon-serve.service" >"$d/cordon-serve.service"
	out=$(cd "$d" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no ./cordon-serve.socket ./cordon-serve.service 2>&1)
	expect_eq "$out" "" "systemd-analyze verify"
	# the ExecStart's options, as cordon serve parses them (it refuses unknown ones at once)
	local exec_line
	exec_line=$(sed -n 's/^ExecStart=//p' "$d/cordon-serve.service")
	expect_match "$exec_line" "--socket /run/cordon/serve.sock" "the service serves the socket's path"
	expect_match "$(sed -n 's/^ListenStream=//p' "$d/cordon-serve.socket")" '^/run/cordon/serve.sock$' "the socket's path"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_'); do t_run "$t"; done
