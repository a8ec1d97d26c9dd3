# The clients' one version, and the Node client (clients/node): its own
# tests (node --test, against a real cordon serve) run here, one result per
# test; skipped (counted) where there is no Node 20 (the qemu guest).
. "$(dirname "$0")/../lib.sh"

NODE=
if command -v node >/dev/null 2>&1 && node -e 'process.exit(+process.versions.node.split(".")[0] >= 20 ? 0 : 1)' 2>/dev/null; then
	NODE=$(command -v node)
fi

# One version (meson.build's project version) for the program, the
# library's header, the Python package and the Node package; GET
# /v1/version answers it too (serve.sh: test_version_endpoint).
test_versions_agree() {
	local v
	v=$(sed -n "s/^  version : '\\(.*\\)',$/\\1/p" "$TOP/meson.build")
	[ -n "$v" ] || { fail "no project version in meson.build"; return 1; }
	expect_eq "$("$CORDON" --version | head -1)" "cordon $v" "cordon --version"
	expect_eq "$(sed -n 's/^#define CORDON_VERSION "\(.*\)"$/\1/p' "$TOP/include/cordon.h")" "$v" "include/cordon.h"
	expect_eq "$(sed -n 's/^version = "\(.*\)"$/\1/p' "$TOP/python/pyproject.toml")" "$v" "python/pyproject.toml"
	expect_eq "$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$TOP/python/cordon/__init__.py")" "$v" "python/cordon/__init__.py"
	expect_eq "$(jq -r .version "$TOP/clients/node/package.json")" "$v" "clients/node/package.json"
	t_assert
}

# The package has no dependencies and ships its type declarations.
test_node_package_shape() {
	expect_eq "$(jq -c '[.name, .type, (.dependencies // {} | length), .types]' "$TOP/clients/node/package.json")" \
		'["cordon-client","module",0,"./src/index.d.ts"]' "package.json"
	[ -s "$TOP/clients/node/src/index.d.ts" ] || fail "no src/index.d.ts"
	if [ -n "$NODE" ]; then
		OUT=$(cd / && "$NODE" --input-type=module -e "import c from '$TOP/clients/node/src/index.js'; console.log(c.name)" 2>&1)
		expect_eq "$OUT" "Client" "imports with Node alone"
	fi
	t_assert
}

# examples/node-agent/agent.mjs against a real server: session, file,
# execs, read back, the report.
test_node_agent_example() {
	[ -n "$NODE" ] || { t_skip "no node 20 or later"; return; }
	local sock=$T_TMP/s.sock srv i
	"$CORDON" serve --socket "$sock" --state-dir "$WS/state" 2>"$T_TMP/serve.log" &
	srv=$!
	for i in $(seq 1 200); do
		[ -S "$sock" ] && break
		kill -0 "$srv" 2>/dev/null || break
		sleep 0.05
	done
	OUT=$("$NODE" "$TOP/examples/node-agent/agent.mjs" "$sock" 2>&1)
	kill -TERM "$srv"
	wait "$srv"
	expect_match "$OUT" $'answer: 42' "the agent's answer"
	expect_match "$OUT" 'status ok execs 2$' "the session's report"
	t_assert
}

# node --test clients/node/test/: every test a result of its own,
# node:NAME (TAP's top-level lines).
test_node_client_suite() { :; }
run_node_suite() {
	local name=test_node_client_suite
	if [ -n "${CORDON_TESTS:-}" ] && ! [[ "$(basename "$0" .sh):$name" =~ $CORDON_TESTS ]]; then
		return 0
	fi
	if [ -z "$NODE" ]; then
		echo "ok - $name # SKIP no node 20 or later"
		echo skip >>"$RESULTS"
		T_SKIP=$((T_SKIP + 1))
		return 0
	fi
	local tmp line
	tmp=$(mktemp -d /tmp/cordon-test-tmp.XXXXXX)
	chmod 755 "$tmp"
	(cd "$TOP/clients/node" && CORDON="$CORDON" TMPDIR="$tmp" "$NODE" --test --test-reporter=tap test/ >"$tmp/tap" 2>&1)
	if ! grep -qE '^(not )?ok ' "$tmp/tap"; then
		echo "not ok - $name"
		sed 's/^/    /' "$tmp/tap" | tail -30
		echo fail >>"$RESULTS"
		echo "failed node:$name" >>"$RESULTS"
		T_FAIL=$((T_FAIL + 1))
	fi
	while IFS= read -r line; do
		case $line in
		"not ok "*)
			line=${line#not ok }
			echo "not ok - node:${line#* - }"
			# the failure's error lines, from the test's YAML block
			grep -A12 -F -- "not ok ${line%% *} - " "$tmp/tap" | grep -E '^\s+(error|expected|actual|location):' | head -6
			echo fail >>"$RESULTS"
			echo "failed node:${line#* - }" >>"$RESULTS"
			T_FAIL=$((T_FAIL + 1)) ;;
		"ok "*"# SKIP"*)
			line=${line#ok }
			echo "ok - node:${line#* - }"
			echo skip >>"$RESULTS"
			T_SKIP=$((T_SKIP + 1)) ;;
		"ok "*)
			line=${line#ok }
			echo "ok - node:${line#* - }"
			echo pass >>"$RESULTS"
			T_PASS=$((T_PASS + 1)) ;;
		esac
	done < <(grep -E '^(not )?ok ' "$tmp/tap")
	rm -rf "$tmp"
}

t_run test_versions_agree
t_run test_node_package_shape
t_run test_node_agent_example
run_node_suite
