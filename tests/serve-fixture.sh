# The fixture of the tests that drive a `cordon serve` over its Unix socket
# or loopback TCP with curl (serve.sh, pause.sh, ...): sourced after lib.sh.
# The servers' fixture. start_server [cordon serve options...]: socket
# $SOCK, state $STATE; the server's pid in $SRV. stop_server sends SIGTERM
# and waits for it. Every server a test starts (start_server, start_tcp) is
# stopped when the test ends, however it returns: an EXIT trap of the test's
# own subshell (t_run runs each test in one), SIGTERM, then SIGKILL after
# 10 s.
serve_started() {
	SRV=$1
	T_SERVERS+=("$1")
	trap stop_servers EXIT
}
start_server() {
	SOCK=$T_TMP/s.sock
	STATE=$WS/state
	"$CORDON" serve --socket "$SOCK" --state-dir "$STATE" "$@" 2>"$T_TMP/serve.log" &
	serve_started $!
	local i
	# A hang guard (some 30 s; a loaded emulated guest is slow to start one).
	for i in $(seq 1 600); do
		[ -S "$SOCK" ] && return 0
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.05
	done
	fail "the server did not start: $(cat "$T_TMP/serve.log")"
}
stop_server() {
	kill -TERM "$SRV" 2>/dev/null
	wait "$SRV" 2>/dev/null
}
# start_tcp [options...]: a TCP server on a free loopback port $PORT, its
# token $TOK (a root server admitting token holders needs a ceiling).
start_tcp() {
	PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	TOK=tok-0123456789abcdef-serve
	printf '%s\n' "$TOK" >"$T_TMP/token"
	chmod 600 "$T_TMP/token"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	"$CORDON" serve --listen "127.0.0.1:$PORT" --token-file "$T_TMP/token" --ceiling "$T_TMP/ceiling.json" \
		--state-dir "$WS/state" "$@" 2>"$T_TMP/serve.log" &
	serve_started $!
	local i
	# The same hang guard as start_server's (some 30 s).
	for i in $(seq 1 600); do
		curl -s --max-time 5 "http://127.0.0.1:$PORT/" >/dev/null && return 0
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.05
	done
	fail "the server did not start: $(cat "$T_TMP/serve.log")"
}
api() { curl -sS --unix-socket "$SOCK" --max-time 60 "$@"; }
api_code() { api -w ' %{http_code}' "$@" | tr -d '\n'; } # the body and the HTTP status, on one line
# new_session [BODY]: the new session's id in $SID, its worker's pid in
# $WPID (the server's newest child: the session's cgroups are named
# cordon-WPID-N).
new_session() {
	local body=${1:-'{}'}
	SID=$(api -X POST http://cordon/v1/sessions -d "$body" | jq -r .id)
	[[ "$SID" =~ ^s-[0-9a-f]{16}$ ]] || { fail "no session: $SID"; return 1; }
	WPID=$(pgrep -n -P "$SRV")
}
# run_exec BODY: the NDJSON stream in $EV, the result event in $RES
run_exec() {
	EV=$(api -X POST "http://cordon/v1/sessions/$SID/exec" -d "$1")
	RES=$(printf '%s\n' "$EV" | jq -c 'select(.type == "result")')
}
stdout_of() { printf '%s\n' "$EV" | jq -r 'select(.type == "stdout") | .data_b64' | base64 -d; }
# exec_started BODY FILE: an exec's stream into FILE in the background (the
# client's pid in $XPID) once the exec printed (a hang guard of 20 s); its
# id in $EID. exec_killed: KILL to it, and the stream's end.
exec_started() {
	api -N -X POST "http://cordon/v1/sessions/$SID/exec" -d "$1" >"$2" &
	XPID=$!
	local i
	for i in $(seq 1 400); do
		grep -q stdout "$2" 2>/dev/null && break
		sleep 0.05
	done
	EID=$(head -1 "$2" | jq -r .exec)
}
exec_killed() {
	api -X POST "http://cordon/v1/sessions/$SID/exec/$EID/signal" -d '{"signal":"KILL"}' >/dev/null
	wait "$XPID"
}
# The session's report, kept for the schema check of the suite.
end_session() {
	api -X DELETE "http://cordon/v1/sessions/$1" >"$T_TMP/end.json"
	keep_report "$T_TMP/end.json"
}
