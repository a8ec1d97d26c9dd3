# cordon mcp (docs/mcp.md): an MCP server on stdio. The edge cases are
# driven by a hand-written client (tests/mcp_client.py: one cordon mcp per
# case, every line of its stdout must be a JSON-RPC message); the
# protocol's own TypeScript SDK client (tests/mcp/client.mjs) checks that a
# real MCP client can list the tools and use them.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve-fixture.sh"
# The changes tool needs an overlay or review workspace: as root an idmapped
# mount of it, which Debian 12's /tmp (tmpfs on 6.1) cannot have; there these
# tests' workspaces (and the private servers' state of the TS client and of
# review_run_fresh and snapshot_restore_fork, through TMPDIR) go on /var/tmp.
overlay_workspaces '^test_mcp_(review_changes|review_run_kept|review_run_fresh|review_policy_held|review_huge_file|typescript_sdk_client|snapshot_restore_fork)$' only

mcp_case() { # CASE [cordon mcp options...]
	command -v python3 >/dev/null || { t_skip "no python3"; return; }
	python3 "$TOP/tests/mcp_client.py" "$CORDON" "$@" || fail "mcp_client.py $1"
	t_assert
}

# The SDK, pinned by tests/mcp/package-lock.json, installed once per lock
# into a cache outside the clone (npm ci); skipped, counted, without node
# or npm, or where the npm registry cannot be reached.
sdk_dir() {
	local sum dir
	sum=$(sha256sum "$TOP/tests/mcp/package-lock.json" | cut -c1-16)
	dir=${CORDON_TEST_CACHE:-/var/cache/cordon-tests}/npm-mcp-$sum
	if [ ! -f "$dir/.done" ]; then
		mkdir -p "$dir" || return 1
		cp "$TOP/tests/mcp/package.json" "$TOP/tests/mcp/package-lock.json" "$dir/"
		(cd "$dir" && flock .lock npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >"$T_TMP/npm" 2>&1 || return 1
		touch "$dir/.done"
	fi
	echo "$dir"
}

test_mcp_typescript_sdk_client() {
	command -v node >/dev/null && command -v npm >/dev/null || { t_skip "no node or npm"; return; }
	local dir
	dir=$(sdk_dir) || { t_skip "npm ci of @modelcontextprotocol/sdk failed (no registry?): $(tail -1 "$T_TMP/npm")"; return; }
	cp "$TOP/tests/mcp/client.mjs" "$dir/client.$$.mjs"
	OUT=$(TMPDIR=$WS node "$dir/client.$$.mjs" "$CORDON" 2>"$T_TMP/err")
	RC=$?
	rm -f "$dir/client.$$.mjs"
	expect_eq "$RC" 0 "client.mjs: $(tail -5 "$T_TMP/err")"
	expect_eq "$OUT" ok "client.mjs"
	t_assert
}

test_mcp_initialize() { mcp_case initialize; }
test_mcp_initialize_older_version() { mcp_case initialize_older; }
test_mcp_tools_list_schemas() { mcp_case tools_list; }
test_mcp_run_echo_and_exit_code() { mcp_case run_echo; }
test_mcp_run_denial_line() { mcp_case run_denied; }
test_mcp_malformed_and_unknown_method() { mcp_case malformed; }
test_mcp_oversized_line() { mcp_case oversized; }
test_mcp_cancel_kills_run() { mcp_case cancel; }
test_mcp_progress_streams_output() { mcp_case progress; }
test_mcp_stdout_pure() { mcp_case stdout_pure; }
test_mcp_session_files() { mcp_case session; }
test_mcp_stdin_end_cleans_up() { mcp_case eof_cleanup; }
test_mcp_sigterm_cleans_up() { mcp_case sigterm_cleanup; }
test_mcp_max_sessions() { mcp_case max_sessions --max-sessions 1; }
test_mcp_max_sessions_ended() { mcp_case max_sessions_ended --max-sessions 1; }

test_mcp_workspace_and_policy_options() {
	printf '{"env": {"GREETING": "from-policy"}}\n' >"$T_TMP/policy.json"
	mkdir "$WS/proj"
	MCP_WS=$WS/proj mcp_case options --workspace "$WS/proj" --policy "$T_TMP/policy.json"
}

# --workspace DIR --review and the changes tool (issue 36: what would reach
# the host, before anything does).
test_mcp_review_changes() {
	mkdir "$WS/proj"
	printf 'hello\n' >"$WS/proj/README"
	MCP_WS=$WS/proj mcp_case review --workspace "$WS/proj" --review
	expect_match "$("$CORDON" mcp --review 2>&1 </dev/null)" "--review keeps the changes to --workspace DIR" "--review without a workspace"
	t_assert
}

# --review: a run's (and a session's) change set is kept, and its result
# says where.
test_mcp_review_run_kept() {
	mkdir "$WS/proj"
	printf 'hello\n' >"$WS/proj/README"
	MCP_WS=$WS/proj CORDON=$CORDON mcp_case review_run --workspace "$WS/proj" --review
}

test_mcp_review_run_fresh() { TMPDIR=$WS mcp_case review_fresh; }

# --review holds against a call's own policy (a workspace_mode of overlay or
# direct, an allow_weaker "workspace"): nothing reaches the workspace.
test_mcp_review_policy_held() {
	mkdir "$WS/proj"
	printf 'hello\n' >"$WS/proj/README"
	MCP_WS=$WS/proj mcp_case review_policy --workspace "$WS/proj" --review
}

# A huge sparse file in the change set is named, never read whole by diff.
test_mcp_review_huge_file() {
	mkdir "$WS/proj"
	MCP_WS=$WS/proj mcp_case review_huge --workspace "$WS/proj" --review
}

# A policy secret (from a file) the command prints: redacted in the
# results, the progress and every byte of cordon mcp's stdout.
test_mcp_output_redacted() {
	printf 'cordon-mcp-s3cr3t-7f3a9c21' >"$T_TMP/token.txt"
	chmod 600 "$T_TMP/token.txt"
	printf '{"secrets": {"TOKEN": {"file": "%s"}}}\n' "$T_TMP/token.txt" >"$T_TMP/policy.json"
	mcp_case redact --policy "$T_TMP/policy.json"
}

test_mcp_timeouts() { mcp_case timeouts; }
test_mcp_statuses_are_results() { mcp_case statuses; }

test_mcp_ceiling() {
	printf '{"network": {"allow": []}, "limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	mcp_case ceiling --ceiling "$T_TMP/ceiling.json"
}

# --server http://127.0.0.1:PORT --token-file F (a cordon serve --listen
# on loopback).
test_mcp_given_tcp_server() {
	command -v curl >/dev/null || { t_skip "no curl"; return; }
	start_tcp
	MCP_STATE=$WS/state mcp_case tcp --server "http://127.0.0.1:$PORT" --token-file "$T_TMP/token"
}
test_mcp_snapshot_restore_fork() { TMPDIR=$WS mcp_case snapshot; }

test_mcp_given_server() {
	mkdir -p "$T_TMP/state"
	"$CORDON" serve --socket "$T_TMP/s.sock" --state-dir "$T_TMP/state" 2>"$T_TMP/serve.err" &
	local pid=$!
	for _ in $(seq 600); do [ -S "$T_TMP/s.sock" ] && break; sleep 0.1; done
	MCP_STATE=$T_TMP/state mcp_case server --server "$T_TMP/s.sock"
	stop "$pid"
	t_assert
}

# --max-sessions holds against session_open calls sent at once (through a
# shared server, whose own bound does not stop them).
test_mcp_max_sessions_at_once() {
	mkdir -p "$T_TMP/state"
	"$CORDON" serve --socket "$T_TMP/s.sock" --state-dir "$T_TMP/state" 2>"$T_TMP/serve.err" &
	local pid=$!
	for _ in $(seq 600); do [ -S "$T_TMP/s.sock" ] && break; sleep 0.1; done
	mcp_case max_sessions_at_once --server "$T_TMP/s.sock" --max-sessions 1
	stop "$pid"
	t_assert
}

t_run test_mcp_initialize
t_run test_mcp_initialize_older_version
t_run test_mcp_tools_list_schemas
t_run test_mcp_run_echo_and_exit_code
t_run test_mcp_run_denial_line
t_run test_mcp_malformed_and_unknown_method
t_run test_mcp_oversized_line
t_run test_mcp_cancel_kills_run
t_run test_mcp_progress_streams_output
t_run test_mcp_stdout_pure
t_run test_mcp_session_files
t_run test_mcp_stdin_end_cleans_up
t_run test_mcp_sigterm_cleans_up
t_run test_mcp_max_sessions
t_run test_mcp_max_sessions_ended
t_run test_mcp_workspace_and_policy_options
t_run test_mcp_given_server
t_run test_mcp_given_tcp_server
t_run test_mcp_output_redacted
t_run test_mcp_timeouts
t_run test_mcp_statuses_are_results
t_run test_mcp_ceiling
t_run test_mcp_max_sessions_at_once
t_run test_mcp_review_changes
t_run test_mcp_review_run_kept
t_run test_mcp_review_run_fresh
t_run test_mcp_review_policy_held
t_run test_mcp_review_huge_file
t_run test_mcp_snapshot_restore_fork
t_run test_mcp_typescript_sdk_client
