# Issue 18: cordon serve, driven with curl over its Unix socket (docs/api.md).
. "$(dirname "$0")/../lib.sh"
# A client's overlay workspace (test_client_rights_*): on a host whose /tmp
# has no idmapped mounts (Debian 12's tmpfs), on /var/tmp.
overlay_workspaces '^test_(client_rights_(allow_uid|tcp_token)|session_changes.*)$' only

. "$(dirname "$0")/../serve-fixture.sh"

# A KILL asked while an exec is still starting (the agent may be in the
# exec's cgroup, starting it) ends the exec, never the agent and so the
# session: it is sent once the exec has started. The KILL goes on the same
# connection as soon as the background exec's answer comes, in 15 rounds.
test_kill_as_an_exec_starts() {
	start_server || return 1
	new_session || return 1
	local out
	out=$(python3 - "$SOCK" "$SID" <<'PY'
import http.client, json, socket, sys, time
class C(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])
def call(c, method, path, body=None):
    c.request(method, path, body=json.dumps(body) if body is not None else None)
    r = c.getresponse()
    return r.status, r.read()
sid = sys.argv[2]
c = C("cordon")
for i in range(15):
    st, b = call(c, "POST", f"/v1/sessions/{sid}/exec", {"argv": ["sleep", "100"], "background": True})
    eid = json.loads(b.splitlines()[0])["exec"]
    st, b = call(c, "POST", f"/v1/sessions/{sid}/exec/{eid}/signal", {"signal": "KILL"})
    if st != 200:
        print(f"round {i}: signal {st} {b!r}"); break
    for _ in range(400):
        st, b = call(c, "GET", f"/v1/sessions/{sid}/exec/{eid}")
        if st != 200 or json.loads(b).get("state") != "running":
            break
        time.sleep(0.05)
    got = json.loads(b).get("status") if st == 200 else f"HTTP {st} {b!r}"
    if got != "killed":
        print(f"round {i}: {got}"); break
else:
    print("ok")
PY
)
	expect_eq "$out" ok "each exec killed as it starts"
	run_exec '{"argv":["true"]}'
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" ok "the session lives on"
	end_session "$SID"
	t_assert
}

# The HTTP server is cordon-serve's alone: cordon itself (every run) loads
# neither libmicrohttpd nor its TLS stack.
test_cordon_links_no_http_server() {
	expect_eq "$(ldd "$CORDON" | grep -cE 'microhttpd|gnutls')" 0 "cordon: no libmicrohttpd, no gnutls"
	expect_match "$(ldd "$(dirname "$CORDON")/cordon-serve")" 'microhttpd' "cordon-serve links it"
	expect_match "$("$CORDON" serve --help)" '^usage: cordon serve' "cordon serve is cordon-serve"
	t_assert
}

test_socket_mode_and_peer_uid() {
	chmod 755 "$T_TMP"
	start_server || return 1
	expect_eq "$(stat -c %a "$SOCK")" 600 "socket file mode"
	# Opened to everyone, the peer's uid still decides.
	chmod 666 "$SOCK"
	local out
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$SOCK" -w ' %{http_code}' \
		-X POST http://cordon/v1/runs -d '{"argv":["/bin/true"]}' | tr -d '\n')
	expect_match "$out" '"error": "not authorized".* 403$' "another uid refused"
	out=$(api_code http://cordon/v1/nowhere)
	expect_match "$out" '"error": "no such path.* 404$' "an unknown path"
	stop_server
	t_assert
}

test_tcp_bearer_token() {
	start_tcp || return 1
	local port=$PORT out
	out=$(curl -sS -w ' %{http_code}' -X POST "http://127.0.0.1:$port/v1/runs" -d '{"argv":["/bin/true"]}' | tr -d '\n')
	expect_match "$out" '"error": "not authorized"} 401$' "no token"
	out=$(curl -sS -w ' %{http_code}' -H 'Authorization: Bearer tok-0123456789abcdef-serveX' -X POST "http://127.0.0.1:$port/v1/runs" -d '{"argv":["/bin/true"]}' | tr -d '\n')
	expect_match "$out" '401$' "a wrong token"
	out=$(curl -sS -H 'Authorization: Bearer tok-0123456789abcdef-serve' -X POST "http://127.0.0.1:$port/v1/runs" -d '{"argv":["/bin/true"]}' | jq -r .status)
	expect_eq "$out" ok "the token"
	stop_server
	t_assert
}

# GET /v1/health needs no token and says only ready; GET /v1/metrics needs
# one and counts what the server did: sessions started (the start latency
# histogram), execs and runs by status, the denials they reported.
test_health_and_metrics() {
	start_tcp || return 1
	local port=$PORT out auth="Authorization: Bearer $TOK"
	out=$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/v1/health" | tr -d '\n')
	expect_eq "$out" '{"status": "ready"} 200' "health without a token"
	expect_match "$(curl -sS -w ' %{http_code}' -X POST "http://127.0.0.1:$port/v1/health" | tr -d '\n')" '405$' "POST health"
	expect_match "$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/v1/health/x" | tr -d '\n')" '401$' "a path below health needs the token"
	expect_match "$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/v1/metrics" | tr -d '\n')" '401$' "metrics without a token"
	local m=http://127.0.0.1:$port/v1
	SID=$(curl -sS -H "$auth" -X POST "$m/sessions" -d '{}' | jq -r .id)
	[[ "$SID" =~ ^s-[0-9a-f]{16}$ ]] || fail "no session: $SID"
	curl -sS -H "$auth" -X POST "$m/sessions/$SID/exec" -d '{"argv":["sh","-c","unshare -U true; unshare -U true; exit 4"]}' >/dev/null
	curl -sS -H "$auth" -X POST "$m/sessions/$SID/exec" -d '{"argv":["true"]}' >/dev/null
	curl -sS -H "$auth" -X POST "$m/runs" -d '{"argv":["sh","-c","unshare -U true"]}' >/dev/null
	out=$(curl -sS -H "$auth" -D "$T_TMP/h" "$m/metrics")
	expect_match "$(cat "$T_TMP/h")" 'Content-Type: text/plain; version=0.0.4' "the exposition format"
	local want
	for want in 'cordon_serve_sessions 1' 'cordon_serve_sessions_created_total 1' \
		'cordon_serve_results_total{kind="exec",status="exit"} 1' \
		'cordon_serve_results_total{kind="exec",status="ok"} 1' \
		'cordon_serve_results_total{kind="run",status="exit-nonzero"} 1' \
		'cordon_serve_denials_total{kind="exec"} 2' 'cordon_serve_denials_total{kind="run"} 1' \
		'cordon_serve_session_start_seconds_count{pool="cold"} 1' \
		'cordon_serve_session_start_seconds_bucket{pool="cold",le="+Inf"} 1'; do
		grep -qxF "$want" <<<"$out" || fail "metrics: no line '$want' in: $(grep -v '^#' <<<"$out" | grep -v ' 0$' | tr '\n' ';')"
	done
	curl -sS -H "$auth" -X DELETE "$m/sessions/$SID" >/dev/null
	expect_match "$(curl -sS -H "$auth" "$m/metrics")" $'\ncordon_serve_sessions 0\n' "the session ended"
	stop_server
	t_assert
}

# GET /v1/version: the program's version (meson.build's, one place) and the
# API's; like every endpoint but health it needs the token.
test_version_endpoint() {
	start_tcp || return 1
	local v m=http://127.0.0.1:$PORT/v1
	v=$(sed -n "s/^  version : '\(.*\)',$/\1/p" "$TOP/meson.build")
	[ -n "$v" ] || { fail "no project version in meson.build"; return 1; }
	expect_eq "$(curl -sS -H "Authorization: Bearer $TOK" "$m/version" | jq -c .)" "{\"version\":\"$v\",\"api\":1}" "GET /v1/version"
	expect_eq "$("$CORDON" --version | head -1)" "cordon $v" "the program's own version"
	expect_match "$(curl -sS -w ' %{http_code}' "$m/version" | tr -d '\n')" '401$' "version without a token"
	expect_match "$(curl -sS -w ' %{http_code}' -H "Authorization: Bearer $TOK" -X POST "$m/version" | tr -d '\n')" '405$' "POST version"
	expect_match "$(curl -sS -w ' %{http_code}' -H "Authorization: Bearer $TOK" "$m/version/x" | tr -d '\n')" '404$' "a path below version"
	stop_server
	t_assert
}

test_oneshot_run_and_retention() {
	start_server --keep-runs 2 || return 1
	api -X POST http://cordon/v1/runs -d '{"argv":["sh","-c","echo hi; echo oops >&2; exit 3"]}' >"$T_TMP/r1.json"
	keep_report "$T_TMP/r1.json"
	R=$T_TMP/r1.json
	expect_eq "$(field .status)/$(field .exit_code)" "exit-nonzero/3" "status"
	expect_eq "$(field .run.stdout_b64 | base64 -d)/$(field .run.stderr_b64 | base64 -d)" "hi/oops" "output"
	local id
	id=$(field .run.id)
	expect_eq "$(api "http://cordon/v1/runs/$id" | jq -r .run.id)" "$id" "GET the run"
	api -X POST http://cordon/v1/runs -d '{"argv":["/bin/true"]}' >/dev/null
	api -X POST http://cordon/v1/runs -d '{"argv":["/bin/true"],"policy":{"limits":{"wall_time":"5s"}}}' >"$T_TMP/r3.json"
	expect_eq "$(jq -r .limits.wall_time.source "$T_TMP/r3.json")" policy "the run's policy applied"
	expect_match "$(api_code "http://cordon/v1/runs/$id")" '404$' "the oldest run is no longer kept"
	# A field the runs API does not take is refused, never ignored (the
	# Python client sent binary stdin as stdin_b64 and the run got none).
	expect_match "$(api_code -X POST http://cordon/v1/runs -d '{"argv":["cat"],"stdin_b64":"AAE="}')" \
		'stdin_b64.* 400$' "stdin_b64 refused"
	stop_server
	t_assert
}

test_session_state_across_execs() {
	start_server || return 1
	new_session || return 1
	run_exec '{"argv":["sh","-c","echo kept > /tmp/state; echo $FOO; pwd"],"env":{"FOO":"bar"},"cwd":"/tmp"}'
	expect_eq "$(stdout_of)" "$(printf 'bar\n/tmp')" "env and cwd"
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" ok "first exec"
	run_exec '{"argv":["cat","/tmp/state"]}'
	expect_eq "$(stdout_of)" kept "a file from the previous exec"
	run_exec '{"argv":["cat"],"stdin":"from stdin"}'
	expect_eq "$(stdout_of)" "from stdin" "stdin"
	run_exec '{"argv":["sh","-c","exit 7"]}'
	expect_eq "$(printf '%s' "$RES" | jq -r '.status + "/" + (.exit_code|tostring)')" exit/7 "exit code"
	run_exec '{"argv":["/nonexistent"]}'
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" start-error "a command that cannot start"
	expect_eq "$(api "http://cordon/v1/sessions/$SID" | jq -r '[.execs[].state] | join(",")')" done,done,done,done,done "GET session"
	end_session "$SID"
	expect_eq "$(jq -r '.session.id + " " + ([.execs[].status] | join(","))' "$T_TMP/end.json")" \
		"$SID ok,ok,ok,exit,start-error" "the session's report"
	[ -s "$STATE/sessions/$SID/report.json" ] || fail "no report in the state directory"
	stop_server
	t_assert
}

test_cancel_hung_exec() {
	start_server || return 1
	new_session || return 1
	exec_started '{"argv":["sh","-c","echo up; exec sleep 600"]}' "$T_TMP/hung"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$EID" | jq -r .state)" running "still running"
	exec_killed
	expect_eq "$(jq -r 'select(.type=="result") | .status + " " + .signal' "$T_TMP/hung")" "killed SIGKILL" "the result"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$EID" | jq -r .status)" killed "GET the result"
	# The session lives on.
	run_exec '{"argv":["echo","after"]}'
	expect_eq "$(stdout_of)" after "an exec after the cancel"
	run_exec '{"argv":["sleep","600"],"timeout":"200ms"}'
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" timeout "the exec's own timeout"
	end_session "$SID"
	stop_server
	t_assert
}

test_files_in_and_out() {
	start_server || return 1
	new_session || return 1
	printf 'line1\nline2\n' >"$T_TMP/in"
	api -X PUT --data-binary @"$T_TMP/in" "http://cordon/v1/sessions/$SID/files?path=/tmp/in.txt" >/dev/null
	run_exec '{"argv":["sh","-c","wc -l < /tmp/in.txt; echo made > /tmp/out.txt; ln -s /etc/passwd /tmp/link; mkdir /tmp/d; ln -s /etc /tmp/dlink"]}'
	expect_eq "$(stdout_of)" 2 "the run reads what was put"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/files?path=/tmp/out.txt")" made "a file the run wrote"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/files/list?path=/tmp" | jq -r '[.entries[] | select(.name | startswith("cordon-test") | not) | .name + ":" + .type] | sort | join(",")')" \
		"d:dir,dlink:symlink,in.txt:file,link:symlink,out.txt:file" "list"
	# The run's links are never followed, not at the end nor on the way.
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/files?path=/tmp/link")" '40[03]$' "a link"
	expect_match "$(api_code -X PUT -d x "http://cordon/v1/sessions/$SID/files?path=/tmp/dlink/x")" '40[03]$' "through a link"
	# Only what the session may write.
	expect_match "$(api_code -X PUT -d x "http://cordon/v1/sessions/$SID/files?path=/etc/evil")" '403$' "outside what it may write"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/files?path=/tmp/none")" '404$' "missing"
	api -X DELETE "http://cordon/v1/sessions/$SID/files?path=/tmp/out.txt" >/dev/null
	run_exec '{"argv":["ls","/tmp"]}'
	expect_nomatch "$(stdout_of)" out.txt "deleted"
	end_session "$SID"
	expect_eq "$(jq -r '[.session.files[] | .op + ":" + (.error // "ok")] | join(",")' "$T_TMP/end.json")" \
		"write:ok,read:ok,list:ok,read:Too many levels of symbolic links,write:Not a directory,write:Read-only file system,read:No such file or directory,delete:ok" \
		"the files API in the evidence"
	expect_eq "$(jq -r '.session.files[0].sha256' "$T_TMP/end.json")" "$(sha256sum "$T_TMP/in" | cut -d' ' -f1)" "hash of what was put"
	stop_server
	t_assert
}

test_ceiling_refuses_session() {
	printf '{"limits": {"memory": "256M", "wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	start_server --ceiling "$T_TMP/ceiling.json" || return 1
	local out
	out=$(api_code -X POST http://cordon/v1/sessions -d '{"policy":{"limits":{"memory":"1G"}}}')
	expect_match "$out" '"error": "unauthorized: .*memory.* 403$' "beyond the ceiling"
	out=$(api_code -X POST http://cordon/v1/sessions -d '{"policy":{"limits":{"memory":"128M"}}}')
	expect_match "$out" '"id":"s-[0-9a-f]{16}",.*} 201$' "within the ceiling"
	out=$(api_code -X POST http://cordon/v1/sessions -d '{"policy":{"limitz":{}}}')
	expect_match "$out" 'unknown key .* 400$' "a bad policy"
	stop_server
	t_assert
}

test_fifty_concurrent_sessions() {
	# 50 connections at once from one uid: beyond 32 whose headers are not
	# read yet, or 10 s after its accept, the server closes one (docs/api.md,
	# "Connections not yet authenticated"), which a slow host (the emulated
	# guest: 'Empty reply from server') reached. This test is about sessions.
	start_server --max-sessions 60 --unauthenticated-connections 64 --header-timeout 5m || return 1
	export SOCK
	# In the emulated guest (CORDON_TEST_SLOW, scripts/vm/guest-init.sh) 20
	# at a time: fifty boundaries set up at once on two emulated CPUs can
	# pass cordon's own 30 s set-up bound, which this test is not about.
	local par=50
	[ -n "${CORDON_TEST_SLOW:-}" ] && par=20
	seq 1 50 | xargs -P "$par" -I{} sh -c '
		r=$(curl -sS --unix-socket "$SOCK" -X POST http://cordon/v1/sessions -d "" 2>&1)
		id=$(printf "%s" "$r" | jq -r .id 2>/dev/null)
		case $id in s-*) ;; *) echo "start: $r" | head -c 300; echo; exit 0;; esac
		out=$(curl -sS --unix-socket "$SOCK" -X POST "http://cordon/v1/sessions/$id/exec" -d "{\"argv\":[\"echo\",\"n{}\"]}" |
			jq -r "select(.type==\"stdout\") | .data_b64" | base64 -d)
		st=$(curl -sS --unix-socket "$SOCK" -X DELETE "http://cordon/v1/sessions/$id" | jq -r .execs[0].status)
		echo "$out $st"' >"$T_TMP/all"
	expect_eq "$(grep -c ' ok$' "$T_TMP/all")" 50 "50 sessions, each with its exec: $(sort "$T_TMP/all" | uniq -c | grep -v ' ok$' | head -5) $(tail -5 "$T_TMP/serve.log")"
	expect_eq "$(sort -u "$T_TMP/all" | wc -l)" 50 "each its own output"
	stop_server
	t_assert
}

test_limits_of_the_server() {
	start_server --max-sessions 2 || return 1
	new_session || return 1
	local first=$SID i
	new_session || return 1
	expect_match "$(api_code -X POST http://cordon/v1/sessions -d '{}')" 'maximum of 2 sessions.* 429$' "max sessions"
	end_session "$SID"
	new_session || return 1
	end_session "$SID"
	end_session "$first"
	# An idle session ends by itself, its report written.
	new_session '{"idle_timeout":"300ms"}' || return 1
	for i in $(seq 1 200); do
		[ -s "$STATE/sessions/$SID/report.json" ] && break
		sleep 0.05
	done
	expect_eq "$(jq -r .session.end "$STATE/sessions/$SID/report.json" 2>/dev/null)" idle-timeout "the idle session ended"
	for i in $(seq 1 100); do
		api_code "http://cordon/v1/sessions/$SID" | grep -q 'ended.* 200$' && break
		sleep 0.05
	done
	# Ended, its report kept (issue 28 item 5).
	expect_match "$(api_code "http://cordon/v1/sessions/$SID")" '"state":"ended".* 200$' "gone"
	stop_server
	t_assert
}

test_client_disconnects_mid_stream() {
	start_server || return 1
	new_session || return 1
	# The client reads the start of the stream and goes away; the exec runs on.
	api -N --max-time 1 -X POST "http://cordon/v1/sessions/$SID/exec" \
		-d '{"argv":["sh","-c","i=0; while [ $i -lt 40 ]; do echo line $i; i=$((i+1)); sleep 0.05; done; echo done > /tmp/fin"]}' >"$T_TMP/part" 2>/dev/null
	local eid i st=""
	eid=$(head -1 "$T_TMP/part" | jq -r .exec)
	for i in $(seq 1 300); do
		st=$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -r '.status // .state')
		[ "$st" != running ] && break
		sleep 0.05
	done
	expect_eq "$st" ok "the exec ran to its end"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/files?path=/tmp/fin")" done "what it did last"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -r .stdout.bytes)" \
		"$(for i in $(seq 0 39); do echo "line $i"; done | wc -c)" "all its output counted"
	run_exec '{"argv":["echo","still"]}'
	expect_eq "$(stdout_of)" still "the server serves on"
	end_session "$SID"
	stop_server
	t_assert
}

test_sigterm_ends_sessions_with_reports() {
	start_server || return 1
	local ids="" i
	for i in 1 2 3; do
		new_session || return 1
		ids="$ids $SID"
	done
	run_exec '{"argv":["sh","-c","echo x > /tmp/x"]}'
	api -N -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["sleep","600"]}' >"$T_TMP/hung" &
	local cpid=$!
	for i in $(seq 1 200); do
		grep -q started "$T_TMP/hung" 2>/dev/null && break
		sleep 0.05
	done
	stop_server
	wait "$cpid"
	for i in $ids; do
		[ -s "$STATE/sessions/$i/report.json" ] || fail "no report for $i"
		keep_report "$STATE/sessions/$i/report.json"
	done
	expect_eq "$(jq -r '.status + " " + ([.execs[].status] | join(","))' "$STATE/sessions/$SID/report.json")" \
		"interrupted ok,session-ended" "the last session's report"
	expect_eq "$(jq -r .session.end "$STATE/sessions/$SID/report.json")" server-stopped "session.end"
	expect_eq "$(jq -r 'select(.type=="result") | .status' "$T_TMP/hung")" session-ended "the stream's end"
	t_assert
}

# Two execs at once, each making a denial while the other runs: each
# result lists its own only (attributed by process group), the session's
# report both.
test_denials_per_exec() {
	start_server || return 1
	new_session || return 1
	# A host file outside the session's view (/tmp is the session's own).
	local out
	out=$(mktemp /var/tmp/cordon-test-outside.XXXXXX)
	# A: waits for B to start, reads a host file outside the view, tells B.
	api -N -X POST "http://cordon/v1/sessions/$SID/exec" -d "{\"argv\":[\"sh\",\"-c\",\"echo up; while [ ! -e b1 ]; do sleep 0.01; done; cat $out; touch a2; exec sleep 600\"]}" >"$T_TMP/a" &
	local cpid=$! i ea
	for i in $(seq 1 200); do
		grep -q stdout "$T_TMP/a" 2>/dev/null && break
		sleep 0.05
	done
	# B: a denied syscall, then runs until A's denial is made.
	run_exec '{"argv":["sh","-c","unshare -U true; touch b1; while [ ! -e a2 ]; do sleep 0.01; done"]}'
	expect_eq "$(printf '%s' "$RES" | jq -c '[.denials[] | [.kind, .target, .count]]')" '[["syscall","unshare(CLONE_NEWUSER)",1]]' "B's denials: its own"
	ea=$(head -1 "$T_TMP/a" | jq -r .exec)
	api -X POST "http://cordon/v1/sessions/$SID/exec/$ea/signal" -d '{"signal":"KILL"}' >/dev/null
	wait "$cpid"
	expect_eq "$(jq -c 'select(.type == "result") | [.denials[] | [.kind, .target, .count]]' "$T_TMP/a")" "[[\"file\",\"$out\",1]]" "A's denials: its own"
	rm -f "$out"
	end_session "$SID"
	expect_eq "$(jq -r '[.denials[] | .kind] | sort | join(",")' "$T_TMP/end.json")" file,syscall "the session's report: both"
	stop_server
	t_assert
}

# wait_pool N: until the warm pool has N sessions ready.
wait_pool() {
	local i
	for i in $(seq 1 400); do
		[ "$(api http://cordon/v1/pool | jq -r .ready)" = "$1" ] && return 0
		sleep 0.05
	done
	fail "the warm pool did not fill: $(api http://cordon/v1/pool)"
}
# The boundary an exec runs in, as the exec sees it: its pid namespace,
# the traces an earlier session left (a file in /tmp, one in the workspace,
# a process), what its workspace holds.
probe='{"argv":["sh","-c","readlink /proc/self/ns/pid; ls /tmp/trace wtrace 2>/dev/null | tr \"\\n\" \" \"; grep -l \"^sleep$\" /proc/[0-9]*/comm 2>/dev/null | wc -l; ls -A . | wc -l"]}'

test_warm_pool() {
	start_server --warm 2 --max-sessions 4 || return 1
	wait_pool 2 || return 1
	local out s1 s2 s3 ns1 ns2 ns3
	out=$(api -X POST http://cordon/v1/sessions -d '{}')
	expect_eq "$(printf '%s' "$out" | jq -r .warm)" true "a session from the pool"
	SID=$(printf '%s' "$out" | jq -r .id)
	s1=$SID
	# Leave traces: a file in /tmp and the workspace, a process still up.
	api -N -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["sh","-c","echo t > /tmp/trace; echo w > wtrace; echo up; exec sleep 600"]}' >"$T_TMP/bg" &
	local cpid=$! i
	for i in $(seq 1 200); do
		grep -q stdout "$T_TMP/bg" 2>/dev/null && break
		sleep 0.05
	done
	run_exec "$probe"
	ns1=$(stdout_of | sed -n 1p)
	expect_eq "$(stdout_of | sed -n 2p)" "/tmp/trace wtrace 1" "the first session's own traces"
	# The second, from the pool too: a fresh boundary.
	new_session '{}'
	s2=$SID
	run_exec "$probe"
	ns2=$(stdout_of | sed -n 1p)
	[ "$s2" != "$s1" ] || fail "the pool handed out one session twice"
	[ "$ns2" != "$ns1" ] || fail "two sessions share a pid namespace: $ns1"
	expect_eq "$(stdout_of | sed -n 2p)" "0" "nothing of the first session in the second (/tmp, workspace, processes)"
	expect_eq "$(stdout_of | sed -n 3p)" "0" "an empty workspace"
	# Refilled in the background; the first session, once ended, is
	# never handed out again.
	end_session "$s1"
	wait "$cpid"
	expect_eq "$(jq -r '[.session.warm, (.session.pool_seconds >= 0), .status, ([.execs[].status] | join(","))] | join(" ")' "$T_TMP/end.json")" \
		"true true ok session-ended,ok" "a warm session's report"
	wait_pool 2 || return 1
	new_session '{}'
	s3=$SID
	run_exec "$probe"
	ns3=$(stdout_of | sed -n 1p)
	[ "$s3" != "$s1" ] && [ "$s3" != "$s2" ] || fail "a session id handed out again: $s3"
	[ "$ns3" != "$ns1" ] && [ "$ns3" != "$ns2" ] || fail "a boundary reused: $ns3"
	expect_eq "$(stdout_of | sed -n 2p)" "0" "nothing of the earlier sessions in the third"
	# Other policies or a timeout of its own: never from the pool.
	out=$(api -X POST http://cordon/v1/sessions -d '{"policy":{"limits":{"pids":128}}}')
	expect_eq "$(printf '%s' "$out" | jq -r '.warm // "cold"')" cold "another policy"
	local cold
	cold=$(printf '%s' "$out" | jq -r .id)
	out=$(api -X POST http://cordon/v1/sessions -d '{"timeout":"1h"}')
	expect_eq "$(printf '%s' "$out" | jq -r '.warm // "cold"')" cold "a timeout of its own"
	# SIGTERM: the pool's sessions end with the rest; no report, no
	# directory for the ones no client took; every client's has its report.
	local pooled
	pooled=$(ls "$STATE/sessions" | grep -v -e "$s1" -e "$s2" -e "$s3" -e "$cold" -e "$(printf '%s' "$out" | jq -r .id)")
	stop_server
	[ -n "$pooled" ] || fail "no pool sessions at SIGTERM"
	for i in $pooled; do
		[ -e "$STATE/sessions/$i" ] && fail "a pool session no client took is left: $i"
	done
	for i in $s2 $s3; do
		[ -s "$STATE/sessions/$i/report.json" ] || fail "no report for $i"
		keep_report "$STATE/sessions/$i/report.json"
	done
	t_assert
}

# A one-shot run takes a pool session when its policy is the pool's: a
# boundary of its own (nothing of an earlier run's: a file in /tmp, one in
# the workspace, a process), its report the
# session's with the command's outcome, and the pool refilled.
test_warm_oneshot_run() {
	start_server --warm 1 || return 1
	wait_pool 1 || return 1
	R=$T_TMP/w1.json
	api -X POST http://cordon/v1/runs -d '{"argv":["sh","-c","echo t > /tmp/trace; echo w > wtrace; sleep 600 & echo up; cat; exit 3"],"stdin":"in"}' >"$R"
	keep_report "$R"
	expect_eq "$(jq -r '[.session.warm, (.session.pool_seconds >= 0), .status, .exit_code, (.execs | length)] | join(" ")' "$R")" \
		"true true exit-nonzero 3 1" "a warm one-shot's report"
	local id
	expect_eq "$(field .run.stdout_b64 | base64 -d | sed -n 2p)" "in" "its stdin"
	# The run's stdout in the report is the command's, as cordon run says
	# (review 3 F3: a warm one-shot said 0 bytes, the hash of nothing).
	expect_eq "$(field .stdout.bytes) $(field .stdout.sha256)" \
		"$(field .run.stdout_b64 | base64 -d | wc -c) $(field .run.stdout_b64 | base64 -d | sha256sum | cut -d' ' -f1)" \
		"the report's stdout"
	id=$(field .run.id)
	[ -s "$STATE/runs/$id/work/wtrace" ] || fail "the run's workspace is not STATE/runs/ID/work"
	expect_eq "$(api "http://cordon/v1/runs/$id" | jq -r .run.id)" "$id" "GET the run"
	wait_pool 1 || return 1
	R=$T_TMP/w2.json
	api -X POST http://cordon/v1/runs -d "$probe" >"$R"
	expect_eq "$(field .session.warm)/$(field .status)" "true/ok" "the second run from the pool too"
	expect_eq "$(field .run.stdout_b64 | base64 -d | sed -n 2,3p | tr '\n' ' ')" "0 0 " \
		"nothing of the first run in the second (/tmp, workspace, processes), an empty workspace"
	expect_eq "$(api http://cordon/v1/pool | jq -r '[.hits, .misses] | join(" ")')" "2 0" "both from the pool"
	# Another policy: cold, as before.
	api -X POST http://cordon/v1/runs -d '{"argv":["/bin/true"],"policy":{"limits":{"pids":64}}}' >"$T_TMP/w3.json"
	expect_eq "$(jq -r '.session.warm // "cold"' "$T_TMP/w3.json")" cold "another policy"
	stop_server
	t_assert
}

test_warm_policy_declared() {
	printf '{"limits":{"pids":64}}\n' >"$T_TMP/warm.json"
	start_server --warm 1 --warm-policy "$T_TMP/warm.json" || return 1
	wait_pool 1 || return 1
	local out
	out=$(api -X POST http://cordon/v1/sessions -d '{}')
	expect_eq "$(printf '%s' "$out" | jq -r '.warm // "cold"')" cold "no policy: not the pool's"
	out=$(api -X POST http://cordon/v1/sessions -d '{"policy":{"limits":{"pids":64}}}')
	expect_eq "$(printf '%s' "$out" | jq -r '.warm // "cold"')" true "the declared policy"
	expect_eq "$(api http://cordon/v1/pool | jq -r '[.hits, .misses] | join(" ")')" "1 0" "the pool's counters"
	stop_server
	t_assert
}

test_output_redacted() {
	export CORDON_T_SERVE_SECRET=s3cr3t-value-for-serve
	start_server || return 1
	new_session '{"policy":{"secrets":{"TOK":{"env":"CORDON_T_SERVE_SECRET"}}}}' || return 1
	run_exec '{"argv":["sh","-c","echo tok=$TOK"]}'
	expect_eq "$(stdout_of)" "tok=[REDACTED:TOK]" "redacted in the stream"
	end_session "$SID"
	stop_server
	t_assert
}

# A pty exec over HTTP Upgrade: the client is tests' python, raw bytes both
# ways. pty_client SID ARGV-JSON INPUT [RESIZE-ROWS RESIZE-COLS]
pty_client() {
	python3 - "$SOCK" "$@" <<'PY'
import json, os, socket, subprocess, sys, time
sock, sid, argv, data = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4].encode()
if data.startswith(b"@/"):  # the input in a file
    data = open(data[1:], "rb").read()
resize = sys.argv[5:7]
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
body = json.dumps({"argv": argv, "pty": True, "rows": 30, "cols": 100}).encode()
s.sendall(b"POST /v1/sessions/%s/exec HTTP/1.1\r\nHost: c\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
          b"Content-Length: %d\r\n\r\n" % (sid.encode(), len(body)) + body)
hdr = b""
while b"\r\n\r\n" not in hdr:
    d = s.recv(1)
    if not d:
        break
    hdr += d
lines = hdr.decode().split("\r\n")
print(lines[0])
eid = [l.split(": ", 1)[1] for l in lines if l.lower().startswith("x-cordon-exec:")][0]
s.settimeout(30)
early = b""
if os.environ.get("PTY_WAIT"):  # the exec says when it is ready for input
    while os.environ["PTY_WAIT"].encode() not in early:
        d = s.recv(4096)
        if not d:
            break
        early += d
else:
    time.sleep(0.3)
if resize:
    subprocess.run(["curl", "-sS", "--unix-socket", sock, "-X", "POST", "-d",
                    json.dumps({"rows": int(resize[0]), "cols": int(resize[1])}),
                    "http://c/v1/sessions/%s/exec/%s/resize" % (sid, eid)], check=True, stdout=subprocess.DEVNULL)
s.sendall(data)
if os.environ.get("PTY_SHUT"):
    s.shutdown(socket.SHUT_WR)
out = early
while True:
    d = s.recv(4096)
    if not d:
        break
    out += d
print(eid)
print(out.decode(errors="replace").replace("\r", ""))
PY
}

test_pty_exec() {
	start_server || return 1
	new_session || return 1
	local out
	out=$(pty_client "$SID" '["sh","-c","tty; stty size; read x; echo got:$x"]' $'hello\n')
	expect_eq "$(printf '%s\n' "$out" | head -1)" "HTTP/1.1 101 Switching Protocols" "upgraded"
	expect_match "$(printf '%s\n' "$out" | sed -n 3,6p)" '^/dev/pts/[0-9]+$' "a pty of the session's own devpts"
	# (the pty echoes the input when it comes, maybe before tty or stty ran:
	# on a slow host, 0.3 s after the upgrade is before the shell started)
	expect_match "$(printf '%s\n' "$out" | sed -n 3,6p | LC_ALL=C sort | tr '\n' '|')" '^/dev/pts/[0-9]+\|30 100\|got:hello\|hello\|$' "size, echo and input"
	out=$(pty_client "$SID" '["sh","-c","read x; stty size"]' $'\n' 40 120)
	expect_eq "$(printf '%s\n' "$out" | tail -1)" "40 120" "resized"
	local eid
	eid=$(printf '%s\n' "$out" | sed -n 2p)
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -r '.status + " " + (.pty|tostring)')" "ok true" "the result"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["true"],"pty":true}')" '400$' "no upgrade asked"
	end_session "$SID"
	stop_server
	t_assert
}

# The client's end of input is the pty's (VEOF, as cordon run --pty's), and
# input faster than the exec reads waits instead of being dropped.
test_pty_input_end_and_backpressure() {
	start_server || return 1
	new_session || return 1
	local out eid
	out=$(PTY_SHUT=1 pty_client "$SID" '["sh","-c","cat >/dev/null; echo end:$?"]' $'ping\n')
	expect_eq "$(printf '%s\n' "$out" | tail -1)" "end:0" "the client's shutdown ends the pty's input"
	python3 -c 'print(("x" * 99 + "\n") * 3000, end="")' >"$T_TMP/lines"
	# Sent once the echo is off (else the pty echoes what comes before).
	out=$(PTY_SHUT=1 PTY_WAIT=echo-off pty_client "$SID" '["sh","-c","stty -echo; echo echo-off; wc -c"]' "@$T_TMP/lines")
	expect_eq "$(printf '%s\n' "$out" | tail -1 | tr -d ' ')" 300000 "300 KB typed at once, none dropped"
	eid=$(printf '%s\n' "$out" | sed -n 2p)
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -r '.status + " " + (.input_dropped_bytes|tostring)')" "ok 0" "the result"
	end_session "$SID"
	stop_server
	t_assert
}

# A root server admitting others needs a ceiling, and a client's policy
# names only host paths the client could reach itself (F3); runs are their
# owner's.
test_root_server_client_rights() {
	local out id
	out=$(env -u CORDON_CEILING timeout 10 "$CORDON" serve --socket "$T_TMP/x.sock" --state-dir "$WS/st2" --allow-uid 65534 2>&1)
	[ -e /etc/cordon/ceiling.json ] ||
		expect_match "$out" 'admits other users .*needs a ceiling' "other users without a ceiling"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	chmod 755 "$T_TMP"
	export CORDON_T_SERVE_ENV=s3cr3t-of-the-server
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 || return 1
	chmod 666 "$SOCK"
	as_nobody() {
		setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$SOCK" -w ' %{http_code}' "$@" |
			tr -d '\n'
	}
	out=$(as_nobody -X POST http://cordon/v1/runs -d '{"policy":{"filesystem":{"write":["/root"]}},"argv":["true"]}')
	expect_match "$out" 'filesystem.write: /root: uid 65534 may not write it.* 403$' "a write grant of /root"
	out=$(as_nobody -X POST http://cordon/v1/sessions -d '{"policy":{"secrets":{"S":{"file":"/etc/shadow"}}}}')
	expect_match "$out" 'secrets \(file\): /etc/shadow: uid 65534 may not read it.* 403$' "/etc/shadow as a secret"
	out=$(as_nobody -X POST http://cordon/v1/runs -d '{"policy":{"secrets":{"S":{"env":"CORDON_T_SERVE_ENV"}}},"argv":["true"]}')
	expect_match "$out" "secrets.S: a secret from the server's environment .* 403$" "the server's environment"
	out=$(as_nobody -X POST http://cordon/v1/runs -d '{"policy":{"filesystem":{"read":["/usr/share"]}},"argv":["true"]}')
	expect_match "$out" '"status": "ok".* 200$' "a path the client may read"
	id=$(printf '%s' "${out% *}" | jq -r .run.id)
	expect_match "$(as_nobody "http://cordon/v1/runs/$id")" "\"id\": \"$id\".* 200\$" "its own run"
	id=$(api -X POST http://cordon/v1/runs -d '{"argv":["true"]}' | jq -r .run.id)
	expect_match "$(as_nobody "http://cordon/v1/runs/$id")" 'no such run.* 404$' "another uid's run"
	stop_server
	# A pool built with the operator's --warm-policy gives a client no
	# more than that policy from the client would: checked before the pool.
	local wp='{"secrets":{"S":{"env":"CORDON_T_SERVE_ENV"}}}'
	printf '%s\n' "$wp" >"$T_TMP/warm.json"
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 --warm 1 --warm-policy "$T_TMP/warm.json" || return 1
	chmod 666 "$SOCK"
	wait_pool 1 || return 1
	out=$(as_nobody -X POST http://cordon/v1/sessions -d "{\"policy\":$wp}")
	expect_match "$out" "secrets.S: a secret from the server's environment .* 403$" "the pool's policy: a session"
	out=$(as_nobody -X POST http://cordon/v1/runs -d "{\"policy\":$wp,\"argv\":[\"true\"]}")
	expect_match "$out" "secrets.S: a secret from the server's environment .* 403$" "the pool's policy: a run"
	expect_eq "$(api http://cordon/v1/pool | jq -r .hits)" 0 "nothing taken from the pool"
	stop_server
	t_assert
}

# F4: a client without the token is answered before its body is read; idle
# connections are closed and counted.
test_auth_before_body() {
	start_tcp || return 1
	local out
	out=$(python3 - "$PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(20)
s.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (64 << 20))
try:
    print(s.recv(200).split(b"\r\n")[0].decode())
except socket.timeout:
    print("no answer without the body")
PY
)
	expect_eq "$out" "HTTP/1.1 401 Unauthorized" "refused before its body"
	stop_server
	t_assert
}

test_idle_connections_closed() {
	start_tcp --max-connections 4 --connection-timeout 1 || return 1
	local out
	out=$(python3 - "$PORT" "$TOK" <<'PY'
import socket, sys
port, tok = int(sys.argv[1]), sys.argv[2].encode()
held = []
for i in range(4):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /v1/sessions HTTP/1.1\r\n")  # never finished
    held.append(s)
# An authorized client while they are held: served when the server has
# closed them.
body = b'{"argv":["true"]}'
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(20)
s.sendall(b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s"
          % (tok, len(body), body))
print(s.recv(100).split(b"\r\n")[0].decode())
closed = 0
for h in held:
    h.settimeout(20)
    closed += h.recv(100) == b""
print("closed", closed)
PY
)
	expect_eq "$out" "$(printf 'HTTP/1.1 200 OK\nclosed 4')" "idle connections closed, the client served"
	stop_server
	t_assert
}

# POST /v1/runs: concurrent runs capped, stored output capped.
test_runs_capped() {
	start_server --max-runs 1 --run-output-max 1000 || return 1
	mkdir "$T_TMP/g"
	mkfifo "$T_TMP/g/gate"
	api -X POST http://cordon/v1/runs \
		-d "{\"policy\":{\"filesystem\":{\"read\":[\"$T_TMP/g\"]}},\"argv\":[\"cat\",\"$T_TMP/g/gate\"]}" >"$T_TMP/first" &
	local cpid=$! i
	for i in $(seq 1 200); do
		compgen -G "$STATE/runs/r-*/work" >/dev/null && break
		sleep 0.05
	done
	expect_match "$(api_code -X POST http://cordon/v1/runs -d '{"argv":["true"]}')" 'maximum of one-shot runs.* 429$' \
		"a second run at once"
	timeout 30 sh -c "echo go >'$T_TMP/g/gate'"
	wait "$cpid"
	expect_eq "$(jq -r .run.stdout_b64 "$T_TMP/first" | base64 -d)" go "the first run"
	api -X POST http://cordon/v1/runs -d '{"argv":["sh","-c","printf %05000d 0"]}' >"$T_TMP/big"
	expect_eq "$(jq -r '.run.stdout_truncated' "$T_TMP/big")/$(jq -r .run.stdout_b64 "$T_TMP/big" | base64 -d | wc -c)" \
		true/1000 "the output kept"
	expect_eq "$(jq -r .stdout.bytes "$T_TMP/big")" 5000 "the report counts all of it"
	stop_server
	t_assert
}

# The token file, the port and the socket path are checked.
test_unsafe_setup_refused() {
	local out
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	srv() { timeout 10 "$CORDON" serve --state-dir "$WS/st" --ceiling "$T_TMP/ceiling.json" "$@" 2>&1; }
	printf 'tok-0123456789abcdef-serve\n' >"$T_TMP/token"
	chmod 644 "$T_TMP/token"
	expect_match "$(srv --listen 127.0.0.1:1 --token-file "$T_TMP/token")" 'token: readable or writable by group or others' \
		"a token others may read"
	chmod 600 "$T_TMP/token"
	ln -s token "$T_TMP/token-link"
	expect_match "$(srv --listen 127.0.0.1:1 --token-file "$T_TMP/token-link")" 'token-link: a symlink' "a symlink"
	for out in 70000 80x 0; do
		expect_match "$(srv --listen "127.0.0.1:$out" --token-file "$T_TMP/token")" 'port must be a number from 1 to 65535' \
			"port $out"
	done
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T_TMP/other.sock"
	chown 65534 "$T_TMP/other.sock"
	expect_match "$(srv --socket "$T_TMP/other.sock")" 'exists and is not a socket of uid 0' "another uid's socket"
	[ -S "$T_TMP/other.sock" ] || fail "another uid's socket removed"
	t_assert
}

# Each exec's usage says how long it took from the moment the server had the
# whole request to the command's execve inside the boundary (a number; no
# threshold here: make bench measures it), in a live session and in a warm
# one-shot run; a warm one-shot without stdin gets /dev/null as a session's
# exec does (no memfd made for it), one with stdin its bytes.
test_start_to_exec_measured() {
	start_server --warm 1 || return 1
	new_session || return 1
	run_exec '{"argv":["/bin/true"]}'
	expect_eq "$(printf '%s' "$RES" | jq -r '.usage.start_to_exec_seconds | type')" number "an exec's start_to_exec_seconds"
	# A request too large to go inline to the agent (a memfd instead).
	local big
	big=$(head -c 3000 /dev/zero | tr '\0' x)
	run_exec "{\"argv\":[\"sh\",\"-c\",\"printf %s \\\"\$1\\\" | wc -c\",\"sh\",\"$big\"]}"
	expect_eq "$(stdout_of | tr -d ' ')" 3000 "an exec whose request does not fit a frame"
	end_session "$SID"
	wait_pool 1 || return 1
	R=$T_TMP/s2e.json
	api -X POST http://cordon/v1/runs -d '{"argv":["readlink","/proc/self/fd/0"]}' >"$R"
	keep_report "$R"
	expect_eq "$(field '[.session.warm, (.execs[0].usage.start_to_exec_seconds | type)] | join(" ")')" "true number" \
		"a warm one-shot's start_to_exec_seconds"
	expect_eq "$(field .run.stdout_b64 | base64 -d)" /dev/null "a warm one-shot's stdin without stdin"
	wait_pool 1 || return 1
	api -X POST http://cordon/v1/runs -d '{"argv":["cat"],"stdin":"abc"}' >"$R"
	expect_eq "$(field .session.warm)/$(field .run.stdout_b64 | base64 -d)" true/abc "and with stdin"
	stop_server
	t_assert
}

# The exec's process reaches its execve without a trapped call: an exec
# without stdin makes as many of the file observer's seccomp notifications
# as one with stdin (/dev/null is the agent's, opened once, not opened by
# each exec's process: an openat there is a round trip to the supervisor).
# CORDON_TRACE_TIMING has each session print its count when it ends.
test_exec_without_stdin_opens_nothing() {
	CORDON_TRACE_TIMING=1 start_server || return 1
	local n1 n2
	new_session || return 1
	run_exec '{"argv":["/bin/true"],"stdin":"x"}'
	end_session "$SID"
	new_session || return 1
	run_exec '{"argv":["/bin/true"]}'
	end_session "$SID"
	# The trace is written at the end of the teardown, after the answer.
	local i
	for i in $(seq 1 400); do
		[ "$(grep -c 'seccomp notifications' "$T_TMP/serve.log")" -ge 2 ] && break
		sleep 0.05
	done
	expect_eq "$(grep -c 'seccomp notifications' "$T_TMP/serve.log")" 2 "two sessions traced"
	n1=$(grep -o 'seccomp notifications: [0-9]*' "$T_TMP/serve.log" | sed -n 1p)
	n2=$(grep -o 'seccomp notifications: [0-9]*' "$T_TMP/serve.log" | sed -n 2p)
	expect_eq "$n2" "$n1" "notifications without stdin as with"
	stop_server
	t_assert
}

# Serve's output relay has cordon run's hash budget (CORDON_OUTPUT_HASH):
# past it, sha256 is null and the prefix's hash is given, in an exec's
# result and in a warm one-shot's report; every byte is still counted.
test_output_hash_budget() {
	CORDON_OUTPUT_HASH=1K start_server --warm 1 || return 1
	new_session || return 1
	run_exec '{"argv":["sh","-c","head -c 3000 /dev/zero | tr \"\\\\0\" y; echo small >&2"]}'
	local prefix
	prefix=$(head -c 1024 /dev/zero | tr '\0' y | sha256sum | cut -d' ' -f1)
	expect_eq "$(printf '%s' "$RES" | jq -r '.stdout | [.bytes, .sha256, .hash_skipped, .hashed_bytes, .prefix_sha256] | map(tostring) | join(" ")')" \
		"3000 null byte-budget 1024 $prefix" "an exec's stdout past the budget"
	expect_eq "$(printf '%s' "$RES" | jq -r '.stderr | [.bytes, .sha256, (.hash_skipped // "-")] | map(tostring) | join(" ")')" \
		"6 $(printf 'small\n' | sha256sum | cut -d' ' -f1) -" "stderr within it"
	expect_eq "$(stdout_of | wc -c)" 3000 "every byte relayed"
	end_session "$SID"
	wait_pool 1 || return 1
	R=$T_TMP/hb.json
	api -X POST http://cordon/v1/runs -d '{"argv":["sh","-c","head -c 3000 /dev/zero | tr \"\\\\0\" y"]}' >"$R"
	keep_report "$R"
	expect_eq "$(field '[.session.warm, .stdout.bytes, .stdout.sha256, .stdout.hash_skipped, .stdout.hashed_bytes, .stdout.prefix_sha256] | map(tostring) | join(" ")')" \
		"true 3000 null byte-budget 1024 $prefix" "a warm one-shot's report"
	stop_server
	t_assert
}

# A session's report is complete once init is reaped and its outputs are
# collected: it is handed over then (the DELETE's answer, a one-shot's),
# and the boundary's teardown comes after. Its mount namespace is held
# until then: init's exit does not wait for the view's umounts. The trace
# (CORDON_TRACE_TIMING) shows the order.
test_report_before_teardown() {
	CORDON_TRACE_TIMING=1 start_server --warm 1 || return 1
	wait_pool 1 || return 1
	R=$T_TMP/rb.json
	api -X POST http://cordon/v1/runs -d '{"argv":["sh","-c","echo out > made; echo hi"]}' >"$R"
	keep_report "$R"
	expect_eq "$(field '[.session.warm, .status, (.outputs | map(.path) | join(","))] | map(tostring) | join(" ")')" \
		"true ok made" "a warm one-shot's report, its outputs in it"
	local i
	for i in $(seq 1 400); do
		grep -q 'cgroups removed' "$T_TMP/serve.log" && break
		sleep 0.05
	done
	expect_eq "$(grep -oE 'init reaped|report handed over|mount namespace released|cgroups removed' "$T_TMP/serve.log" | tr '\n' ,)" \
		"init reaped,report handed over,mount namespace released,cgroups removed," "the report before the teardown"
	stop_server
	t_assert
}

for t in test_cordon_links_no_http_server test_socket_mode_and_peer_uid test_tcp_bearer_token test_health_and_metrics test_version_endpoint test_oneshot_run_and_retention test_session_state_across_execs \
	test_cancel_hung_exec test_files_in_and_out test_ceiling_refuses_session test_fifty_concurrent_sessions \
	test_limits_of_the_server test_client_disconnects_mid_stream test_sigterm_ends_sessions_with_reports \
	test_output_redacted test_pty_exec test_warm_pool test_warm_oneshot_run test_warm_policy_declared test_denials_per_exec \
	test_pty_input_end_and_backpressure test_root_server_client_rights test_auth_before_body \
	test_idle_connections_closed test_runs_capped test_unsafe_setup_refused \
	test_start_to_exec_measured test_exec_without_stdin_opens_nothing test_output_hash_budget \
	test_report_before_teardown; do
	t_run $t
done

# network.upstream_ca is a host path read by the (root) worker: checked with
# the client's rights like the others, and opened without blocking (a FIFO
# is refused, not waited on).
test_upstream_ca_client_rights_and_fifo() {
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	chmod 755 "$T_TMP"
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 || return 1
	chmod 666 "$SOCK"
	local pol out
	pol() { jq -cn --arg ca "$1" '{policy:{network:{allow:[{host:"example.com:443",methods:["GET"]}],upstream_ca:$ca}}}'; }
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$SOCK" -w ' %{http_code}' \
		-X POST http://cordon/v1/sessions -d "$(pol /root/no-such-ca.pem)" | tr -d '\n')
	expect_match "$out" 'network.upstream_ca: /root/no-such-ca.pem: uid 65534 may not read it.* 403$' "a root-only path"
	mkfifo "$T_TMP/ca.fifo"
	out=$(api --max-time 30 -w ' %{http_code}' -X POST http://cordon/v1/sessions -d "$(pol "$T_TMP/ca.fifo")" | tr -d '\n')
	expect_match "$out" 'upstream_ca .*ca.fifo: not a regular file.* 500$' "a FIFO: refused, not waited on"
	# (A worker blocked in open() by a regression is let go: the FIFO opened
	# both ways never blocks.)
	timeout 5 sh -c 'exec 3<>"$1"' sh "$T_TMP/ca.fifo"
	stop_server
	t_assert
}

# A worker that never answers: the request gets 504 after --worker-timeout,
# and SIGTERM kills it after --stop-grace instead of waiting for ever.
test_worker_never_answers() {
	# The timeout bounds the session's start too: 500 ms was less than a
	# start takes in the emulated guest (no session, silently).
	start_server --worker-timeout 10s --stop-grace 500ms || return 1
	new_session || { t_assert; return; }
	local w i
	w=$(pgrep -P "$SRV" | head -1)
	[ -n "$w" ] || { fail "no worker"; return 1; }
	kill -STOP "$w"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID")" 'did not answer within 10000 ms.* 504$' "a GET"
	kill -TERM "$SRV"
	for i in $(seq 1 300); do
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SRV" 2>/dev/null; then
		fail "the server waits for the stopped worker"
		kill -KILL "$w" "$SRV"
	fi
	wait "$SRV" 2>/dev/null
	expect_match "$(cat "$T_TMP/serve.log")" '1 session worker\(s\) still running after the grace period: killed' "the log"
	t_assert
}

# An exec's leader that moves into another process group (its child's)
# still ends on the exec's timeout and on KILL, with everything it
# started, and the result keeps saying why.
test_exec_leaving_its_group_still_ends() {
	start_server || return 1
	new_session || return 1
	local esc='import os,time,sys
r,w=os.pipe()
c=os.fork()
if c==0:
    os.setpgid(0,0); os.write(w,b"x"); time.sleep(3600); os._exit(0)
os.read(r,1); os.setpgid(0,c); print("moved", flush=True)
time.sleep(3600); print("still alive")
'
	# 20 s: python starts and moves its child first, in the slow VM guest too
	run_exec "$(jq -cn --arg c "$esc" '{argv:["python3","-c",$c,"esc-marker"],timeout:"20s"}')"
	expect_eq "$(printf '%s' "$RES" | jq -r '.status + " " + .signal')" "timeout SIGKILL" "timeout"
	expect_eq "$(stdout_of)" moved "no output after the timeout"
	exec_started "$(jq -cn --arg c "$esc" '{argv:["python3","-c",$c,"esc-marker"]}')" "$T_TMP/k"
	exec_killed
	expect_eq "$(jq -r 'select(.type=="result") | .status' "$T_TMP/k")" killed "KILL"
	# Nothing of either exec is left in the session.
	run_exec '{"argv":["sh","-c","cat /proc/[0-9]*/cmdline 2>/dev/null | tr \"\\0\" \" \" | grep -c esc-mark[e]r"]}'
	expect_eq "$(stdout_of)" 0 "processes left"
	end_session "$SID"
	stop_server
	t_assert
}

# An exec with a huge result (1000 long denials): the result still reaches
# the client, its denials listed up to a bound and the rest counted.
test_big_exec_result() {
	start_server || return 1
	new_session || return 1
	run_exec '{"argv":["python3","-c","for i in range(1000):\n  try: open(\"/etc/%04d\" % i + \"x\"*245, \"w\")\n  except OSError: pass\nprint(\"done\")\n"]}'
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" ok "the result came"
	expect_eq "$(printf '%s' "$RES" | jq -r '(.denials | length) + .denials_omitted')" 1000 "listed + omitted"
	expect_match "$(printf '%s' "$RES" | jq -r .denials_omitted)" '^[1-9][0-9]*$' "some omitted"
	local eid
	eid=$(printf '%s' "$RES" | jq -r .exec)
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -r .status)" ok "GET the result"
	end_session "$SID"
	expect_eq "$(jq -r '.execs[0].status' "$T_TMP/end.json")" ok "in the report"
	stop_server
	t_assert
}

# A big listing (5,000 names of 250 control bytes: about 7 MB of JSON) is
# streamed from the worker's memfd: the server does not hold it in memory
# while a slow client reads it.
test_big_listing_streamed() {
	start_server || return 1
	new_session || return 1
	run_exec '{"argv":["python3","-c","import os\nos.mkdir(\"d\")\nfor i in range(5000):\n  open(b\"d/\"+(\"%06d\"%i).encode()+b\"\\x01\"*244,\"w\").close()\n"]}'
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" ok "the directory made"
	local rss0 rss1 i
	rss0=$(awk '/^VmRSS/ {print $2}' /proc/$SRV/status)
	api --limit-rate 20k "http://cordon/v1/sessions/$SID/files/list?path=d" -o "$T_TMP/list" &
	local cpid=$!
	for i in $(seq 1 600); do
		[ -s "$T_TMP/list" ] && break
		sleep 0.05
	done
	rss1=$(awk '/^VmRSS/ {print $2}' /proc/$SRV/status)
	kill "$cpid" 2>/dev/null
	wait "$cpid" 2>/dev/null
	[ -s "$T_TMP/list" ] || fail "no listing came"
	[ $((rss1 - rss0)) -lt 3000 ] || fail "the server grew by $((rss1 - rss0)) KiB while a 7 MB listing was read"
	end_session "$SID"
	stop_server
	t_assert
}

# --keep-runs removes a run's tree whatever it holds: deeper than PATH_MAX,
# a symbolic link out (not followed); and the kept runs are found again by
# the next server.
test_retention_deep_and_across_restart() {
	mkdir -p "$T_TMP/keep" && echo k >"$T_TMP/keep/f"
	start_server --keep-runs 1 || return 1
	local r1 r2 r3
	r1=$(api -X POST http://cordon/v1/runs -d "$(jq -cn --arg k "$T_TMP/keep" '{argv:["python3","-c","import os,sys\nos.symlink(sys.argv[1], \"link\")\nd=\"x\"*250\nfor i in range(30):\n  os.mkdir(d); os.chdir(d)\nopen(\"payload\",\"w\").write(\"A\")\n",$k]}')" | jq -r .run.id)
	[ -d "$STATE/runs/$r1" ] || fail "run 1 kept"
	r2=$(api -X POST http://cordon/v1/runs -d '{"argv":["true"]}' | jq -r .run.id)
	[ -e "$STATE/runs/$r1" ] && fail "run 1's deep tree left: $(find "$STATE/runs/$r1" | wc -l) entries"
	expect_eq "$(cat "$T_TMP/keep/f")" k "the link's target untouched"
	stop_server
	start_server --keep-runs 1 || return 1
	r3=$(api -X POST http://cordon/v1/runs -d '{"argv":["true"]}' | jq -r .run.id)
	[ -d "$STATE/runs/$r3" ] || fail "run 3 kept"
	[ -e "$STATE/runs/$r2" ] && fail "run 2 (the previous server's) not removed after the restart"
	expect_eq "$(ls "$STATE/runs" | wc -l)" 1 "runs kept"
	stop_server
	t_assert
}

# A name that is not UTF-8: listed with its bytes (name_b64), and reached
# by them percent-encoded in ?path= (read, delete).
test_files_name_not_utf8() {
	start_server || return 1
	new_session || return 1
	run_exec '{"argv":["sh","-c","printf hidden > \"$(printf \"bad\\377name\")\""]}'
	expect_eq "$(api "http://cordon/v1/sessions/$SID/files/list?path=." | jq -r '.entries[] | select(.name | startswith("bad")) | .name_b64')" \
		"$(printf 'bad\377name' | base64)" "name_b64"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/files?path=bad%FFname")" hidden "read by its bytes"
	expect_eq "$(api -X DELETE "http://cordon/v1/sessions/$SID/files?path=bad%FFname")" "{}" "deleted by its bytes"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/files/list?path=." | jq '[.entries[] | select(.name | startswith("bad"))] | length')" 0 "gone"
	end_session "$SID"
	stop_server
	t_assert
}

for t in test_upstream_ca_client_rights_and_fifo test_worker_never_answers test_exec_leaving_its_group_still_ends \
	test_big_exec_result test_big_listing_streamed test_retention_deep_and_across_restart \
	test_files_name_not_utf8; do
	t_run $t
done

# Issue 27.1 / 28.9: a client's run has the client's rights on the host,
# never the server's. A sticky 1777 directory (the host's /tmp) granted
# writable holds root's 0600 file; a readable tree holds root's 0600 file
# and a 0700 directory. The run (as nobody, the client) reads none of them
# and replaces nothing of root's; what it makes is the client's on the
# host, in a session and a one-shot run. An overlay of a tree that is not
# the client's goes direct (the default mode) or is refused (asked for);
# the client's own workspace in overlay mode comes back the client's.
# ident_setup: the trees in $SHD (sticky), $RD (read grant), $CD (the
# client's own).
ident_setup() {
	chmod 755 "$T_TMP"
	# The trees beside the workspace: on a filesystem an overlay can be had on
	# (overlay_workspaces above); the ceiling stays in $T_TMP.
	local t=$WS/ident
	mkdir -p "$t" && chmod 755 "$t"
	SHD=$t/shared RD=$t/ro CD=$t/mine
	mkdir -p "$SHD" "$RD/closed" "$CD"
	chown 65534:65534 "$CD"
	chmod 1777 "$SHD"
	printf 'root-secret\n' >"$SHD/secret"
	printf 'root-secret\n' >"$RD/secret"
	printf 'inside\n' >"$RD/closed/f"
	chmod 600 "$SHD/secret" "$RD/secret"
	chmod 700 "$RD/closed"
	printf 'open\n' >"$RD/open"
	chmod 644 "$RD/open"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
}
# ident_probe TAG: the exec's argv (JSON) that tries everything.
ident_probe() {
	jq -cn --arg d "$SHD" --arg r "$RD" --arg c "$CD" --arg m "$1" '{argv:["sh","-c",
"cat $0/secret 2>/dev/null && echo READ-SECRET; echo pwned 2>/dev/null >$0/secret && echo WROTE-SECRET; rm -f $0/secret 2>/dev/null; [ -e $0/secret ] || echo REMOVED-SECRET; mv $0/secret $0/moved 2>/dev/null && echo MOVED-SECRET; cat $1/secret 2>/dev/null && echo READ-RO-SECRET; cat $1/closed/f 2>/dev/null && echo READ-CLOSED; cat $1/open; echo made >$0/made-$3 && echo MADE; mkdir $2/d-$3 && echo made >$2/d-$3/f && echo MINE; id -u",
$d,$r,$c,$m]}'
}
# ident_policy MODE: the grants ("" = the default mode).
ident_policy() {
	jq -cn --arg d "$SHD" --arg r "$RD" --arg c "$CD" --arg m "$1" \
		'{filesystem:({write:[$d,$c],read:[$r]} + (if $m == "" then {} else {workspace_mode:$m} end))}'
}
# ident_check OUT TAG WHAT: the probe's output and the host afterwards.
ident_check() {
	expect_eq "$(printf '%s\n' "$1" | paste -sd' ')" "open MADE MINE 1000" "$3: what the run could do"
	expect_eq "$(cat "$SHD/secret")" root-secret "$3: root's file in the sticky directory"
	expect_eq "$(stat -c %u:%a "$SHD/secret")" 0:600 "$3: its owner and mode"
	expect_eq "$(stat -c %u:%g "$SHD/made-$2" 2>&1)" 65534:65534 "$3: the file the run made is the client's"
	expect_eq "$(stat -c %u:%g "$CD/d-$2" "$CD/d-$2/f" 2>&1 | tr '\n' ' ')" "65534:65534 65534:65534 " \
		"$3: in the client's own tree"
}
# ident_cases CALL URL: sessions and one-shot runs through CALL (curl as
# the client) at URL, in the default and direct modes; overlay asked for
# over root's tree is refused; the client's own tree in overlay mode.
ident_cases() {
	local call=$1 url=$2 mode out pol
	for mode in "" direct; do
		pol=$(ident_policy "$mode")
		SID=$($call -X POST "$url/v1/sessions" -d "{\"policy\":$pol}" | jq -r .id)
		[[ "$SID" =~ ^s-[0-9a-f]{16}$ ]] || { fail "no session (${mode:-default}): $SID $(cat "$T_TMP/serve.log")"; continue; }
		EV=$($call -X POST "$url/v1/sessions/$SID/exec" -d "$(ident_probe "s-$mode")")
		out=$(stdout_of)
		# A file the run makes in its session workspace is the client's too.
		EV=$($call -X POST "$url/v1/sessions/$SID/exec" -d '{"argv":["sh","-c","echo w >wsfile; id -u"]}')
		expect_eq "$(stdout_of)" 1000 "session ${mode:-default}: the workspace is writable"
		$call -X DELETE "$url/v1/sessions/$SID" >"$T_TMP/end.json"
		ident_check "$out" "s-$mode" "session, ${mode:-default}"
		expect_eq "$(stat -c %u "$WS/state/sessions/$SID/work/wsfile" 2>&1)" 65534 "session ${mode:-default}: the workspace's new file"
		out=$($call -X POST "$url/v1/runs" -d "$(ident_probe "r-$mode" | jq -c --argjson p "$pol" '. + {policy:$p}')")
		ident_check "$(printf '%s' "$out" | jq -r .run.stdout_b64 | base64 -d)" "r-$mode" "one-shot run, ${mode:-default}"
	done
	out=$($call -X POST "$url/v1/runs" -d "$(ident_probe r-o | jq -c --argjson p "$(ident_policy overlay)" '. + {policy:$p}')")
	expect_match "$(printf '%s' "$out" | jq -r .reason)" "$SHD is not the client's \\(uid 65534\\)" "overlay asked over root's tree"
	# Overlay mode in the client's own tree: applied, the client's.
	pol=$(jq -cn --arg c "$CD" '{filesystem:{write:[$c],workspace_mode:"overlay"},cwd:$c}')
	out=$($call -X POST "$url/v1/runs" -d "$(jq -cn --argjson p "$pol" '{policy:$p,argv:["sh","-c","mkdir ovl && echo x >ovl/f"]}')")
	expect_eq "$(printf '%s' "$out" | jq -r '.status + " " + .changes.state')" "ok applied" "overlay in the client's tree"
	expect_eq "$(stat -c %u:%g "$CD/ovl" "$CD/ovl/f" 2>&1 | tr '\n' ' ')" "65534:65534 65534:65534 " "overlay: what the run made is the client's"
}
test_client_rights_allow_uid() {
	ident_setup
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 || return 1
	chmod 666 "$SOCK"
	nb() { setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$SOCK" --max-time 60 "$@"; }
	ident_cases nb http://cordon
	stop_server
	t_assert
}
test_client_rights_tcp_token() {
	ident_setup
	start_tcp || return 1
	tc() { curl -sS --max-time 60 -H "Authorization: Bearer $TOK" "$@"; }
	ident_cases tc "http://127.0.0.1:$PORT"
	stop_server
	t_assert
}

for t in test_client_rights_allow_uid test_client_rights_tcp_token; do
	t_run $t
done

# Issue 28.8: --socket-mode and --socket-group let an --allow-uid client
# connect without a chmod; a server whose --allow-uid cannot connect says so.
test_socket_mode_and_group() {
	chmod 755 "$T_TMP"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	local out
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 || return 1
	expect_match "$(cat "$T_TMP/serve.log")" '--allow-uid 65534: the socket is mode 0600 of uid 0, which uid 65534 cannot open' "said at start"
	stop_server
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 --socket-group "$(getent group 65534 | cut -d: -f1)" || return 1
	expect_eq "$(stat -c %a:%g "$SOCK")" 660:65534 "the socket's mode and group"
	expect_nomatch "$(cat "$T_TMP/serve.log")" 'cannot open' "nothing to say"
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$SOCK" -X POST http://cordon/v1/runs \
		-d '{"argv":["true"]}' | jq -r .status)
	expect_eq "$out" ok "the allowed uid connects through its group"
	stop_server
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 --socket-mode 0666 || return 1
	expect_eq "$(stat -c %a:%g "$SOCK")" 666:0 "--socket-mode 0666"
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$SOCK" -X POST http://cordon/v1/runs \
		-d '{"argv":["true"]}' | jq -r .status)
	expect_eq "$out" ok "the allowed uid connects"
	stop_server
	out=$("$CORDON" serve --socket "$T_TMP/y.sock" --state-dir "$WS/st3" --socket-mode 0777 2>&1)
	expect_match "$out" '--socket-mode 0777: an octal mode' "an executable mode refused"
	out=$("$CORDON" serve --socket "$T_TMP/y.sock" --state-dir "$WS/st3" --socket-group no-such-group-x 2>&1)
	expect_match "$out" '--socket-group no-such-group-x: no such group' "an unknown group"
	mkdir "$T_TMP/nb" && chown 65534:65534 "$T_TMP/nb"
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$CORDON" serve --socket "$T_TMP/nb/z.sock" --state-dir "$T_TMP/nb/st" --socket-group 0 2>&1)
	expect_match "$out" '--socket-group 0: the socket could not be made' "a group the server is not in"
	[ -z "$(ls "$T_TMP/nb" | grep sock)" ] || fail "the socket was left: $(ls "$T_TMP/nb")"
	t_assert
}

for t in test_socket_mode_and_group; do
	t_run $t
done

# Issue 28.9: a ceiling that limits writes must cover the server's state
# directory (every workspace is below it): said at start, not as a refusal
# of every session.
test_ceiling_must_cover_state_dir() {
	local out ro='"read":["/usr","/etc","/lib","/lib64","/bin","/sbin","/opt","/var","/proc","/dev"]'
	printf '{"filesystem":{"write":["%s"],%s}}\n' "$T_TMP/elsewhere" "$ro" >"$T_TMP/c1.json"
	out=$(timeout 20 "$CORDON" serve --socket "$T_TMP/c.sock" --state-dir "$WS/st" --ceiling "$T_TMP/c1.json" 2>&1)
	expect_match "$out" "--state-dir $WS/st: not under any write prefix of the ceiling's filesystem.write.*add it to the ceiling" "said at start"
	[ -e "$T_TMP/c.sock" ] && fail "it listened"
	printf '{"filesystem":{"write":["%s"],%s}}\n' "$WS" "$ro" >"$T_TMP/c2.json"
	start_server --ceiling "$T_TMP/c2.json" || return 1
	new_session || return 1
	run_exec '{"argv":["sh","-c","echo x >f && cat f"]}'
	expect_eq "$(stdout_of)" x "a session under a ceiling that covers the state directory"
	end_session "$SID"
	stop_server
	t_assert
}

for t in test_ceiling_must_cover_state_dir; do
	t_run $t
done

# Issue 27.4: request bodies share one byte budget. Twelve connections each
# declare a 7 MiB body, send 6 MiB of it and hold the rest: the server
# holds at most the budget (8M here), the others are answered 503 at their
# headers, and its own resident memory stays far below what twelve held
# bodies take (72 MiB). Once the holders leave, the budget is free again.
test_body_budget_bounds_the_server() {
	start_server --body-budget 8M || return 1
	local out
	out=$(python3 - "$SOCK" "$SRV" <<'EOF'
import socket, sys
path, pid = sys.argv[1], sys.argv[2]
def rss():
    for l in open("/proc/%s/status" % pid):
        if l.startswith("VmRSS:"):
            return int(l.split()[1]) * 1024
def post(body, declared=None):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(120)
    s.connect(path)
    s.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: c\r\nContent-Length: %d\r\n\r\n" % (declared or len(body)))
    return s
def answer(s):
    data = b""
    try:
        while b"\r\n" not in data:
            k = s.recv(4096)
            if not k:
                break
            data += k
    except OSError:
        pass
    return data.split(b"\r\n")[0].decode(errors="replace")
base = rss()
held, chunk = [], b"x" * (1 << 20)
for i in range(12):
    s = post(b"", 7 << 20)
    try:
        for k in range(6):
            s.sendall(chunk)
    except OSError:
        pass
    held.append(s)
grown = rss() - base
print("grown-ok" if grown < (40 << 20) else "grown %d MiB" % (grown >> 20))
s = post(b"y" * (2 << 20))
try:
    s.sendall(b"y" * (2 << 20))
except OSError:
    pass
print("full:", answer(s))
for s in held:
    s.close()
import time
for i in range(600):
    s = post(b"zzz")
    s.sendall(b"zzz")
    a = answer(s)
    if "503" not in a:
        break
    time.sleep(0.05)
print("after:", a)
EOF
)
	expect_match "$out" 'grown-ok' "the server's memory with 12 held bodies"
	expect_match "$out" 'full: HTTP/1.1 503' "a body past the budget"
	expect_match "$out" 'after: HTTP/1.1 400' "the budget given back"
	stop_server
	t_assert
}

# Issue 27.5: connections not yet authenticated are limited apart from the
# token holder's, every loopback address counting as one client, and each
# is closed at the header deadline (--header-timeout). 32 unfinished
# requests from each of 127.0.0.1 to 127.0.0.8 (256, the connection limit)
# leave the token holder served; an unfinished request is then closed by
# the server (EOF), not left open.
test_unauthenticated_connections_apart() {
	# The idle timeout far above the deadline: only the deadline closes them.
	start_tcp --header-timeout 3s --connection-timeout 600 || return 1
	local out
	out=$(python3 - "$PORT" "$TOK" <<'EOF'
import socket, subprocess, sys
port, tok = int(sys.argv[1]), sys.argv[2]
held = []
for a in range(1, 9):
    for i in range(32):
        s = socket.socket()
        s.bind(("127.0.0.%d" % a, 0))
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /v1/pool HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            pass
        held.append(s)
r = subprocess.run(["curl", "-sS", "--max-time", "60", "-o", "/dev/null", "-w", "%{http_code}",
                    "-H", "Authorization: Bearer " + tok, "http://127.0.0.1:%d/v1/pool" % port],
                   capture_output=True, text=True)
print("holder:", r.stdout, r.stderr.strip())
s = socket.socket()
s.settimeout(120)
s.connect(("127.0.0.1", port))
s.sendall(b"GET /v1/pool HTTP/1.1\r\nHost: x\r\n")
try:
    print("unfinished:", "closed" if s.recv(4096) == b"" else "answered")
except socket.timeout:
    print("unfinished: still open")
except OSError as e:
    print("unfinished: closed", e)
EOF
)
	expect_match "$out" 'holder: 200' "the token holder among 256 unfinished requests"
	expect_match "$out" 'unfinished: closed' "an unfinished request at the header deadline"
	stop_server
	t_assert
}

for t in test_body_budget_bounds_the_server test_unauthenticated_connections_apart; do
	t_run $t
done

# Issue 27.9: each exec in its own cgroup, a child of the session's. A
# process the exec started that left its process group and its parent
# (double fork, setsid) still ends with the exec's timeout and with a KILL
# (its pid is gone), while the session lives on. Once on the backend this
# host picks, once on cgroup v2 where the unified hierarchy offers it.
esc_gone() { # the escapee of the last exec is no longer there (waits for its end)
	run_exec '{"argv":["sh","-c","p=$(cat /tmp/esc.pid); for i in $(seq 1 400); do kill -0 $p 2>/dev/null || { echo gone; exit; }; sleep 0.05; done; echo alive"]}'
	expect_eq "$(stdout_of)" gone "$1"
}
exec_cgroup_case() {
	start_server || return 1
	new_session || return 1
	local esc='import os,time
c = os.fork()
if c == 0:
    os.setsid()
    if os.fork() == 0:
        open("/tmp/esc.tmp", "w").write(str(os.getpid()))
        os.rename("/tmp/esc.tmp", "/tmp/esc.pid")
        while True:
            open("/tmp/esc.hb", "a").write("x")
            time.sleep(0.2)
    os._exit(0)
os.waitpid(c, 0)  # the middle one reaped: nothing links the escapee to the exec
while not os.path.exists("/tmp/esc.pid"):
    time.sleep(0.01)
print("started", flush=True)
time.sleep(600)
'
	# The timeout must come after two python starts (an emulated guest
	# under load took over a second): 20 s there, 3 s elsewhere.
	local to=3s
	[ -z "${CORDON_TEST_SLOW:-}" ] || to=20s
	run_exec "$(jq -cn --arg c "$esc" --arg to "$to" '{argv:["python3","-c",$c],timeout:$to}')"
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" timeout "timeout"
	expect_eq "$(stdout_of)" started "the escapee started"
	esc_gone "the escapee after the exec's timeout"
	run_exec '{"argv":["rm","-f","/tmp/esc.pid"]}'
	exec_started "$(jq -cn --arg c "$esc" '{argv:["python3","-c",$c]}')" "$T_TMP/k"
	exec_killed
	expect_eq "$(jq -r 'select(.type=="result") | .status' "$T_TMP/k")" killed "KILL"
	expect_match "$(jq -r 'select(.type=="result") | .usage.cgroup_cpu_seconds' "$T_TMP/k")" '^[0-9.e-]+$' "the exec's CPU from its cgroup"
	esc_gone "the escapee after the exec's KILL"
	end_session "$SID"
	expect_eq "$(jq -r .enforcement.cgroup "$T_TMP/end.json")" "${CORDON_CGROUP:-$(cg_backend)}" "the session's cgroup backend"
	stop_server
}
test_exec_cgroup_ends_escapees() {
	[ "$(cg_backend)" != none ] || { t_skip "no cgroup hierarchy for the session"; return; }
	exec_cgroup_case
	t_assert
}
test_exec_cgroup_ends_escapees_v2() {
	[ -n "$(cg2_root)" ] || { t_skip "no cgroup2 hierarchy"; return; }
	CORDON_CGROUP=v2 exec_cgroup_case
	t_assert
}

for t in test_exec_cgroup_ends_escapees test_exec_cgroup_ends_escapees_v2; do
	t_run $t
done

# Issue 28 items 5 to 7: sessions listed per client, reports kept after
# the end, directories removed after the retention.

# GET /v1/sessions: a client sees its own sessions (running, and ended
# while kept), root sees all; another's session is 404 to it, report too.
test_sessions_listed_per_client() {
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	chmod 755 "$T_TMP"
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 || return 1
	chmod 666 "$SOCK"
	as_nobody() {
		setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$SOCK" "$@"
	}
	new_session || return 1
	local mine=$SID theirs ended
	theirs=$(as_nobody -X POST http://cordon/v1/sessions -d '{}' | jq -r .id)
	[[ "$theirs" =~ ^s-[0-9a-f]{16}$ ]] || fail "nobody's session: $theirs"
	new_session || return 1
	ended=$SID
	end_session "$ended"
	local i
	for i in $(seq 1 600); do # a hang guard: until its worker is reaped
		api "http://cordon/v1/sessions/$ended" | grep -q '"ended"' && break
		sleep 0.05
	done
	expect_eq "$(api http://cordon/v1/sessions | jq -c '[.sessions[] | [.id, .state]] | sort')" \
		"$(jq -cn --arg a "$mine" --arg b "$theirs" --arg c "$ended" '[[$a,"running"],[$b,"running"],[$c,"ended"]] | sort')" \
		"root sees all"
	expect_eq "$(as_nobody http://cordon/v1/sessions | jq -c '[.sessions[] | [.id, .state, .owner]]')" \
		"$(jq -cn --arg b "$theirs" '[[$b,"running",65534]]')" "nobody sees its own"
	expect_match "$(as_nobody -w ' %{http_code}' "http://cordon/v1/sessions/$mine")" ' 404$' "root's session, to nobody"
	expect_match "$(as_nobody -w ' %{http_code}' "http://cordon/v1/sessions/$ended/report")" ' 404$' "root's ended session's report, to nobody"
	expect_match "$(api_code "http://cordon/v1/sessions/$ended/report")" '"end": "deleted".* 200$' "its report, to root"
	expect_match "$(api_code "http://cordon/v1/sessions/$ended/exec" -X POST -d '{"argv":["true"]}')" ' 410$' "exec after its end"
	expect_match "$(api_code -X DELETE "http://cordon/v1/sessions/$theirs")" '"end": "deleted".* 200$' "root ends nobody's"
	end_session "$mine"
	stop_server
	t_assert
}

# --keep-sessions 1: an ended session's directory (report, workspace) is
# kept until a newer one ends; then removed whatever the run left in it
# (a symbolic link out, not followed; a fifo; a directory chmod 000).
test_session_dirs_removed_after_retention() {
	mkdir -p "$T_TMP/keep" && echo k >"$T_TMP/keep/f"
	start_server --keep-sessions 1 || return 1
	new_session || return 1
	local a=$SID b i
	run_exec "$(jq -cn --arg k "$T_TMP/keep" '{argv:["sh","-c","ln -s \"$1\" link && ln -s \"$1/f\" flink && mkfifo fifo && mkdir -p d/e && echo x >d/e/f && chmod 000 d/e d", "sh", $k]}')"
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" ok "the hostile tree made"
	end_session "$a"
	for i in $(seq 1 600); do # a hang guard: until its worker is reaped
		api "http://cordon/v1/sessions" | jq -e --arg a "$a" '.sessions[] | select(.id == $a and .state == "ended")' >/dev/null && break
		sleep 0.05
	done
	[ -f "$STATE/sessions/$a/report.json" ] || fail "the ended session's report kept"
	# (the fifo is not applied to the workspace: it stays in the change set)
	[ -L "$STATE/sessions/$a/work/link" ] && [ "$(stat -c %a "$STATE/sessions/$a/work/d")" = 0 ] &&
		[ -n "$(find "$STATE/sessions/$a" -type p)" ] ||
		fail "its workspace kept: $(find "$STATE/sessions/$a" -printf '%y %m %p\n' 2>&1)"
	new_session || return 1
	b=$SID
	end_session "$b"
	for i in $(seq 1 600); do # a hang guard: until the older one is removed
		[ -e "$STATE/sessions/$a" ] || break
		sleep 0.05
	done
	[ -e "$STATE/sessions/$a" ] && fail "the older session's directory left: $(find "$STATE/sessions/$a" | head -5)"
	expect_eq "$(cat "$T_TMP/keep/f")" k "the links' target untouched"
	expect_match "$(api_code "http://cordon/v1/sessions/$a/report")" ' 404$' "its report no longer kept"
	expect_match "$(api_code "http://cordon/v1/sessions/$b/report")" ' 200$' "the newer one's kept"
	stop_server
	t_assert
}

# Between a DELETE and its worker's exit the session is ending, not gone:
# a client asking then (another request of its harness) gets "ending", 410
# for an exec or its changes, 409 for a report not written yet; never 404
# "no such session". The worker is held (tests/syscall_hook.py) at the
# rename that puts its report in place, so the window is there on any
# machine; the server runs under the tracer, its other threads untouched.
test_ending_session_is_not_unknown() {
	[ "$(uname -m)" = x86_64 ] || { t_skip "tests/syscall_hook.py knows x86_64's system call numbers only"; return; }
	SOCK=$T_TMP/s.sock
	STATE=$WS/state
	: >"$T_TMP/hold"
	local ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
	python3 "$TOP/tests/syscall_hook.py" -f -H "$T_TMP/hold" renameat,renameat2 1 '^report\.json\.tmp' \
		"echo \$HOOK_PID >'$T_TMP/hold'" -- "$CORDON" serve --socket "$SOCK" --state-dir "$STATE" 2>"$T_TMP/serve.log" &
	serve_started $!
	local i
	for i in $(seq 1 400); do
		[ -S "$SOCK" ] && break
		sleep 0.05
	done
	new_session || return 1
	api -X DELETE "http://cordon/v1/sessions/$SID" >"$T_TMP/end.json" &
	local del=$!
	for i in $(seq 1 1200); do # a hang guard: until the worker is held
		[ -s "$T_TMP/hold" ] && break
		sleep 0.05
	done
	expect_match "$(cat "$T_TMP/hold")" '^[0-9]+$' "the worker held at its report's rename: $(cat "$T_TMP/serve.log")"
	expect_eq "$(api http://cordon/v1/sessions/$SID)" "{\"id\":\"$SID\",\"state\":\"ending\"}" "GET: ending"
	expect_eq "$(api http://cordon/v1/sessions | jq -c '[.sessions[] | .state]')" '["ending"]' "listed as ending"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/exec" -X POST -d '{"argv":["true"]}')" 'is ending.* 410$' "an exec: 410"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/changes")" ' 410$' "its changes: 410"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/report")" 'report is not written yet.* 409$' "its report: 409 until written"
	kill -KILL "$(cat "$T_TMP/hold")"
	wait "$del"
	local srv
	srv=$(pgrep -P "$SRV" -x cordon-serve || pgrep -P "$SRV")
	kill -TERM $srv
	wait "$SRV"
	t_assert
}

for t in test_sessions_listed_per_client test_session_dirs_removed_after_retention test_ending_session_is_not_unknown; do
	t_run $t
done

# Issue 28, friction: the session's workspace and cwd are told at its
# creation; relative files-API paths and a relative exec cwd are the
# session's cwd's (the policy's cwd here, not the workspace); a files
# write makes missing parents unless ?parents=0.
test_session_cwd_and_relative_paths() {
	start_server || return 1
	local out
	out=$(api -X POST http://cordon/v1/sessions -d '{"policy":{"cwd":"/tmp"}}')
	SID=$(printf '%s' "$out" | jq -r .id)
	[[ "$SID" =~ ^s-[0-9a-f]{16}$ ]] || { fail "no session: $out"; return 1; }
	expect_eq "$(printf '%s' "$out" | jq -r '.workspace + " " + .cwd')" "$STATE/sessions/$SID/work /tmp" \
		"creation names the workspace and the cwd"
	expect_eq "$(api "http://cordon/v1/sessions/$SID" | jq -r .cwd)" /tmp "GET names the cwd"
	expect_match "$(api_code -X PUT -d deep "http://cordon/v1/sessions/$SID/files?path=a/b/c.txt")" '"bytes":4.* 200$' \
		"a relative write, its parents made"
	run_exec '{"argv":["sh","-c","cat a/b/c.txt; echo; pwd"]}'
	expect_eq "$(stdout_of)" "$(printf 'deep\n/tmp')" "the exec starts where the relative path went"
	run_exec '{"argv":["pwd"],"cwd":"a/b"}'
	expect_eq "$(stdout_of)" /tmp/a/b "a relative exec cwd is the session cwd's"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/files/list?path=." | jq -r '[.entries[].name] | index("a") != null')" \
		true "list . is the cwd"
	expect_match "$(api_code -X PUT -d x "http://cordon/v1/sessions/$SID/files?path=new/x&parents=0")" ' 404$' \
		"parents=0: a missing directory is not made"
	expect_match "$(api_code -X PUT -d x "http://cordon/v1/sessions/$SID/files?path=new/x&parents=maybe")" ' 400$' \
		"parents: a bad value"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/files?path=/tmp/a/b/c.txt")" deep "the absolute path is the same file"
	end_session "$SID"
	stop_server
	t_assert
}

t_run test_session_cwd_and_relative_paths

# Issue 28, friction: every 429 and 503 says when to try again
# (Retry-After), so that clients back off instead of failing.
# The status and the Retry-After of a response's headers (curl -D -).
status_retry() { tr -d '\r' | awk 'NR == 1 { s = $2 } tolower($1) == "retry-after:" { r = $2 } END { print s, r }'; }
test_retry_after_on_429_and_503() {
	start_server --max-runs 1 --max-sessions 1 --body-budget 1M || return 1
	mkdir "$T_TMP/g"
	mkfifo "$T_TMP/g/gate"
	api -X POST http://cordon/v1/runs \
		-d "{\"policy\":{\"filesystem\":{\"read\":[\"$T_TMP/g\"]}},\"argv\":[\"cat\",\"$T_TMP/g/gate\"]}" >"$T_TMP/first" &
	local cpid=$! i hdr
	for i in $(seq 1 200); do # a hang guard: until the first run holds its slot
		compgen -G "$STATE/runs/r-*/work" >/dev/null && break
		sleep 0.05
	done
	hdr=$(api -D - -o /dev/null -X POST http://cordon/v1/runs -d '{"argv":["true"]}' | status_retry)
	expect_eq "$hdr" "429 1" "a second run at once: 429, Retry-After"
	timeout 30 sh -c "echo go >'$T_TMP/g/gate'"
	wait "$cpid"
	new_session || return 1
	hdr=$(api -D - -o /dev/null -X POST http://cordon/v1/sessions -d '{}' | status_retry)
	expect_eq "$hdr" "429 1" "a session past --max-sessions"
	head -c 2000000 /dev/zero >"$T_TMP/big"
	hdr=$(api -D - -o /dev/null -X PUT --data-binary @"$T_TMP/big" "http://cordon/v1/sessions/$SID/files?path=big" | status_retry)
	expect_eq "$hdr" "503 1" "a body past the budget: 503"
	end_session "$SID"
	stop_server
	t_assert
}

t_run test_retry_after_on_429_and_503

# Issue 28, friction: a background exec (`cmd &` died with its exec):
# answered at once with its id; it runs on beside other execs; its output
# is kept for GET .../output (follow=0: what is there; else until its
# result); signal, status and the session's end as any exec's.
test_background_exec() {
	start_server || return 1
	new_session || return 1
	local out eid i
	out=$(api -X POST "http://cordon/v1/sessions/$SID/exec" \
		-d '{"argv":["sh","-c","echo $$ > /tmp/bg.pid; echo up; echo warn >&2; trap \"echo bye; exit 3\" TERM; while :; do sleep 0.05; done"],"background":true}')
	eid=$(printf '%s' "$out" | jq -r .exec)
	[[ "$eid" =~ ^e-[0-9a-f]{16}$ ]] || { fail "no background exec: $out"; return 1; }
	expect_eq "$(printf '%s' "$out" | jq -r '.state + " " + (.background|tostring)')" "running true" "answered at once"
	for i in $(seq 1 600); do # a hang guard: until its first line is out
		api "http://cordon/v1/sessions/$SID/files?path=/tmp/bg.pid" 2>/dev/null | grep -q '^[0-9]' && break
		sleep 0.05
	done
	run_exec '{"argv":["sh","-c","kill -0 $(cat /tmp/bg.pid) && echo alive"]}'
	expect_eq "$(stdout_of)" alive "it runs on beside (and after) another exec"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -r .state)" running "its state"
	for i in $(seq 1 600); do # a hang guard: until both lines are queued
		EV=$(api "http://cordon/v1/sessions/$SID/exec/$eid/output?follow=0")
		[ "$(printf '%s\n' "$EV" | jq -r 'select(.type == "stderr") | .data_b64' | base64 -d)" = warn ] && break
		sleep 0.05
	done
	expect_eq "$(printf '%s\n' "$EV" | jq -r .type | head -1)/$(stdout_of)" "started/up" "follow=0: what is there, then the stream ends"
	EV=$(api "http://cordon/v1/sessions/$SID/exec/$eid/output?follow=0")
	expect_eq "$(printf '%s\n' "$EV" | jq -r .type | paste -sd,)" started "what was read is not read again"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["true"],"background":"yes"}')" ' 400$' \
		"background: a boolean"
	# A follower waits for the rest and the result.
	api "http://cordon/v1/sessions/$SID/exec/$eid/output" >"$T_TMP/follow" &
	local fpid=$!
	for i in $(seq 1 600); do # a hang guard: until the follower is attached
		api_code "http://cordon/v1/sessions/$SID/exec/$eid/output?follow=0" | grep -q 'already has a reader.* 409$' && break
		sleep 0.05
	done
	api -X POST "http://cordon/v1/sessions/$SID/exec/$eid/signal" -d '{"signal":"TERM"}' >/dev/null
	wait "$fpid"
	EV=$(cat "$T_TMP/follow")
	RES=$(printf '%s\n' "$EV" | jq -c 'select(.type == "result")')
	expect_eq "$(stdout_of)/$(printf '%s' "$RES" | jq -r '.status + " " + (.dropped_bytes|tostring)')" "bye/killed 0" \
		"the follower has the rest and the result"
	EV=$(api "http://cordon/v1/sessions/$SID/exec/$eid/output")
	expect_eq "$(printf '%s\n' "$EV" | jq -r .type | paste -sd,)" started,result "an ended exec's stream: its result"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/exec/e-0123456789abcdef/output")" ' 404$' "no such exec"
	# The session's end ends a background exec (and the report has it).
	api -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["sleep","1000"],"background":true}' >/dev/null
	end_session "$SID"
	expect_eq "$(jq -r '[.execs[].status] | join(",")' "$T_TMP/end.json")" "killed,ok,session-ended" "the session's report"
	stop_server
	t_assert
}

t_run test_background_exec

# Review of 27.4/27.5, F1 and F2: what one authenticated client can take of
# the server. hold_bodies U N SIZE NAME: as uid U (setpriv; --allow-uid'd),
# N requests (POST /v1/sessions, Content-Length SIZE, Expect: 100-continue,
# one at a time), each either taken (100 Continue; its first byte sent,
# the rest never) or refused (503): "held H refused R" in $T_TMP/o/NAME
# once done (its pid in HOLDERS). Then, with $T_TMP/o/stop, how many held
# are still open ("open K", in NAME.end); with mode eof, it waits until the
# server closed every held one ("closed"), sending a byte every half second
# meanwhile, and posts one more (its answer in NAME.again).
hold_bodies() {
	# written whole under another name, then renamed: a holder started by
	# the call before may not have read it yet (a loaded machine), and
	# rewriting the file in place left it an empty script, which ran,
	# printed nothing and exited (the flake of test_client_connections_share)
	cat >"$T_TMP/hold.py.new" <<'PY'
import os, socket, sys, time
path, n, size, out, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
def post():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30) # a hang guard
    s.connect(path)
    s.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: c\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n" % size)
    return s, s.makefile("rb").readline()
held, refused, other = [], 0, ""
for i in range(n):
    try:
        s, line = post()
    except OSError as e:
        other = "timeout" if isinstance(e, socket.timeout) else str(e)
        break
    if b" 100 " in line:
        s.sendall(b"{")
        held.append(s)
    elif b" 503 " in line:
        refused += 1
        s.close()
    else:
        other = line.decode(errors="replace").strip()
        break
def put(name, text):
    with open(name + ".tmp", "w") as f:
        f.write(text + "\n")
    os.rename(name + ".tmp", name)
put(out, ("held %d refused %d %s" % (len(held), refused, other)).strip())
if mode == "eof":
    left = set(held)
    for i in range(240): # a hang guard: 120 s
        for s in list(left):
            s.setblocking(False)
            try:
                if s.recv(4096) == b"":
                    left.discard(s)
                    continue
            except BlockingIOError:
                pass
            except OSError:
                left.discard(s)
                continue
            try:
                s.send(b" ")
            except OSError:
                left.discard(s)
        if not left:
            break
        time.sleep(0.5)
    # and its room given back: one more body of the size is taken
    for i in range(600): # a hang guard
        s, line = post()
        if b" 100 " in line:
            break
        s.close()
        time.sleep(0.05)
    put(out + ".end", "closed" if not left else "still open %d" % len(left))
    put(out + ".again", line.decode(errors="replace").strip())
    sys.exit(0)
for i in range(6000): # a hang guard: until the test is done
    if os.path.exists(os.path.join(os.path.dirname(out), "stop")):
        break
    time.sleep(0.05)
k = 0
for s in held:
    s.setblocking(False)
    try:
        k += s.recv(1) != b""
    except BlockingIOError:
        k += 1
    except OSError:
        pass
put(out + ".end", "open %d" % k)
PY
	mv -f "$T_TMP/hold.py.new" "$T_TMP/hold.py"
	install -d -m 1777 "$T_TMP/o"
	setpriv --reuid "$1" --regid "$1" --clear-groups /usr/bin/python3 "$T_TMP/hold.py" "$SOCK" "$2" "$3" "$T_TMP/o/$4" "${5:-hold}" &
	HOLDERS+=($!)
}
# wait_file F: until it exists (a hang guard), then its text
wait_file() { # FILE: a hang guard of 3 minutes (ASan on a loaded 2-core machine), never a bound
	local i
	for i in $(seq 1 3600); do
		[ -e "$1" ] && break
		sleep 0.05
	done
	cat "$1" 2>/dev/null
}
start_shared() {
	HOLDERS=()
	chmod 755 "$T_TMP"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	start_server --ceiling "$T_TMP/ceiling.json" --socket-mode 0666 --allow-uid 65534 --allow-uid 1001 \
		--allow-uid 1002 --allow-uid 1003 --connection-timeout 600 "$@"
}

# F1: nobody opens 300 authenticated connections whose bodies never come
# (the idle timeout far away, no body deadline): it holds 64, a quarter of
# the 256, the rest are answered 503. Three more uids then take what the
# others may hold together (256 less the unauthenticated quarter and
# root's): root is served while they all still hold theirs.
test_client_connections_share() {
	start_shared --body-timeout 1h || return 1
	hold_bodies 65534 300 100 nobody
	expect_eq "$(wait_file "$T_TMP/o/nobody")" "held 64 refused 236" "nobody's 300 connections"
	local u out n=0
	for u in 1001 1002 1003; do
		hold_bodies $u 80 100 u$u
	done
	for u in 1001 1002 1003; do
		out=$(wait_file "$T_TMP/o/u$u")
		n=$((n + $(printf '%s\n' "$out" | awk '{print $2 + 0; exit}')))
		expect_match "$out" '^held [0-9]+ refused [0-9]+$' "uid $u: each answered 100 or 503"
	done
	expect_eq "$n" 64 "what three more uids hold together"
	expect_eq "$(api -o /dev/null -w '%{http_code}' --max-time 30 http://cordon/v1/sessions)" 200 "root's request"
	touch "$T_TMP/o/stop"
	expect_eq "$(wait_file "$T_TMP/o/nobody.end")" "open 64" "nobody's connections held all along"
	wait "${HOLDERS[@]}"
	stop_server
	t_assert
}

# F2: nobody declares four bodies of 64 MiB - 1 and sends none of them:
# one is taken (a quarter of the 256 MiB budget), three are 503; two more
# uids take one each, a third's is 503 (three quarters for all but root):
# root's POST /v1/runs is served all the same.
test_client_body_share() {
	start_shared --body-timeout 1h || return 1
	local big=$(((64 << 20) - 1))
	hold_bodies 65534 4 $big nobody
	expect_eq "$(wait_file "$T_TMP/o/nobody")" "held 1 refused 3" "nobody's four bodies"
	local u
	for u in 1001 1002 1003; do
		hold_bodies $u 1 $big u$u
		wait_file "$T_TMP/o/u$u" >"$T_TMP/o/u$u.seen"
	done
	expect_eq "$(cat "$T_TMP"/o/u100[123].seen | tr '\n' ,)" "held 1 refused 0,held 1 refused 0,held 0 refused 1," "three more uids' bodies"
	expect_match "$(api_code -X POST http://cordon/v1/runs -d '{"argv":["true"]}')" ' 200$' "root's run"
	touch "$T_TMP/o/stop"
	expect_eq "$(wait_file "$T_TMP/o/nobody.end")" "open 1" "nobody's body held all along"
	wait "${HOLDERS[@]}"
	stop_server
	t_assert
}

# The body deadline (--body-timeout 2s): a body sent a byte every half
# second is closed (EOF) and its room in the budget given back (the same
# client's next body of that size is taken); an exec's stream that outlasts
# the deadline (its body was in at once) is not cut.
test_body_deadline_closes_slow_body() {
	start_shared --body-timeout 2s || return 1
	hold_bodies 65534 1 $(((64 << 20) - 1)) nobody eof
	expect_eq "$(wait_file "$T_TMP/o/nobody")" "held 1 refused 0" "nobody's body taken"
	expect_eq "$(wait_file "$T_TMP/o/nobody.end")" closed "the slow body's connection at the deadline"
	expect_match "$(cat "$T_TMP/o/nobody.again")" '^HTTP/1.1 100 ' "its room given back"
	wait "${HOLDERS[@]}"
	new_session || return 1
	run_exec '{"argv":["sh","-c","sleep 3; echo out"]}'
	expect_eq "$(stdout_of)" out "a stream longer than the body deadline"
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" ok "its result"
	end_session "$SID"
	stop_server
	t_assert
}

for t in test_client_connections_share test_client_body_share test_body_deadline_closes_slow_body; do
	t_run $t
done

# GET /v1/sessions/{id}/changes: a review-mode session over a host tree
# shows its change set as it is now, with a diff, while the host tree is
# untouched; what the session planted there (a link to /etc/shadow) is
# listed, never followed; a session in direct mode has none (409).
test_session_changes() {
	start_server || return 1
	local p=$WS/proj before
	mkdir -p "$p/src"
	printf 'hello\n' >"$p/README"
	printf 'one\n' >"$p/src/a.txt"
	printf 'keep\n' >"$p/src/b.txt"
	before=$(cd "$p" && find . -printf '%p %y %m %s\n' | sort; cat README src/a.txt src/b.txt)
	new_session "$(jq -cn --arg p "$p" '{policy: {cwd: $p, filesystem: {write: [$p], workspace_mode: "review"}}}')"
	run_exec '{"argv":["sh","-c","echo changed >>README && echo new >new.txt && rm src/a.txt && ln -s /etc/shadow evil && printf \"\\000\\001bin\" >blob"]}'
	expect_eq "$(printf '%s' "$RES" | jq -r .status)" ok "the exec: $RES"
	local out
	out=$(api_code "http://cordon/v1/sessions/$SID/changes")
	expect_match "$out" ' 200$' "GET changes"
	printf '%s' "${out% 200}" >"$T_TMP/changes.json"
	R="$T_TMP/changes.json"
	expect_eq "$(field -c '[.changes[] | "\(.change) \(.path) \(.type)"]')" \
		'["modified README file","created blob file","created evil other","created new.txt file","deleted src/a.txt other"]' "the change set"
	expect_eq "$(field -r .session)" "$SID" "the session"
	expect_eq "$(field -r .diff_truncated)" false "the diff is whole"
	local diff
	diff=$(field -r .diff)
	expect_match "$diff" '^\+changed$' "the diff: the modification"
	expect_match "$diff" '^\+\+\+ b/new.txt$' "the diff: the new file"
	expect_match "$diff" '^--- a/src/a.txt$' "the diff: the deletion"
	expect_nomatch "$diff" 'root:' "the link to /etc/shadow is not followed"
	expect_eq "$(cd "$p" && find . -printf '%p %y %m %s\n' | sort; cat README src/a.txt src/b.txt)" "$before" "the host tree is untouched"
	# A second look sees what came since.
	run_exec '{"argv":["sh","-c","echo more >more.txt"]}'
	R="$T_TMP/changes2.json"
	api "http://cordon/v1/sessions/$SID/changes" >"$R"
	expect_match "$(field -r '[.changes[].path] | join(",")')" 'more.txt' "the change set as it is now"
	end_session "$SID"
	R="$T_TMP/end.json"
	expect_eq "$(field -r .changes.state)" kept "the session's change set is kept for review"
	new_session '{"policy": {"filesystem": {"workspace_mode": "direct"}}}'
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/changes")" 'no change set: its workspace mode is direct.* 409$' "direct mode: none"
	end_session "$SID"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/changes")" ' 410$' "an ended session: 410"
	stop_server
	t_assert
}

# A client's session (--allow-uid) in review mode over the client's own
# tree: its change set is beside that tree, in a directory the client owns
# and could rearrange from outside while the server reads it, so the server
# reads it with the client's rights (cli/serve-changes.c), not root's.
test_session_changes_of_a_client() {
	ident_setup
	start_server --ceiling "$T_TMP/ceiling.json" --allow-uid 65534 || return 1
	chmod 666 "$SOCK"
	nb() { setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$SOCK" --max-time 60 "$@"; }
	local sid out
	printf 'mine\n' >"$CD/README"
	chown 65534:65534 "$CD/README"
	sid=$(nb -X POST http://cordon/v1/sessions -d "$(jq -cn --arg c "$CD" '{policy: {cwd: $c, filesystem: {write: [$c], workspace_mode: "review"}}}')" | jq -r .id)
	[[ "$sid" =~ ^s-[0-9a-f]{16}$ ]] || { fail "no session: $sid"; t_assert; return; }
	nb -X POST "http://cordon/v1/sessions/$sid/exec" -d '{"argv":["sh","-c","echo more >>README; echo new >new.txt"]}' >/dev/null
	R=$T_TMP/cchanges.json
	nb "http://cordon/v1/sessions/$sid/changes" >"$R"
	expect_eq "$(field -c '[.changes[] | "\(.change) \(.path)"]')" '["modified README","created new.txt"]' "the client's change set: $(head -c 300 "$R")"
	expect_match "$(field -r .diff)" '^\+more$' "its diff"
	expect_eq "$(cat "$CD/README")" mine "the client's tree is untouched"
	nb -X DELETE "http://cordon/v1/sessions/$sid" >/dev/null
	# Below a directory the client owns ($CD/proj: its change set goes in
	# $CD, which the client could rearrange while the server reads), the
	# server reads with the client's rights, never its own.
	mkdir "$CD/proj" && chown 65534:65534 "$CD/proj"
	sid=$(nb -X POST http://cordon/v1/sessions -d "$(jq -cn --arg c "$CD/proj" '{policy: {cwd: $c, filesystem: {write: [$c], workspace_mode: "review"}}}')" | jq -r .id)
	nb -X POST "http://cordon/v1/sessions/$sid/exec" -d '{"argv":["sh","-c","echo new >new.txt"]}' >/dev/null
	out=$(nb -w ' %{http_code}' "http://cordon/v1/sessions/$sid/changes")
	# (the change set there is the server's, 0700: the client's rights do
	# not reach it, and the server does not lend its own)
	expect_match "$out" "in a directory its client can change, so the server reads it with the client's rights" "read with the client's rights, which do not reach it"
	expect_match "$out" ' 409$' "409"
	nb -X DELETE "http://cordon/v1/sessions/$sid" >/dev/null
	stop_server
	t_assert
}

t_run test_kill_as_an_exec_starts
t_run test_session_changes
t_run test_session_changes_of_a_client
