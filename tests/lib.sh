# Shared helpers for the integration tests (sourced). Each test is a shell
# function; t_run runs it in a fresh workspace and records pass/fail.
set -u
: "${BUILD:?BUILD must name the build directory}"
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) # the source tree
CORDON="$BUILD/cordon"
HOSTILE="$BUILD/probe-hostile"
WHOAMI="$BUILD/probe-whoami"
RESULTS=${RESULTS:-/dev/null}
T_PASS=0
T_FAIL=0
T_SKIP=0
T_CUR=""
T_ERR="" T_ERR_SHOWN=""

fail() { T_ERR="${T_ERR}    $*"$'\n'; return 1; }

# expect_eq ACTUAL EXPECTED WHAT
expect_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
}
# expect_match TEXT REGEX WHAT
expect_match() {
	printf '%s' "$1" | grep -Eq -- "$2" || fail "$3: '$(printf '%s' "$1" | head -c 300)' does not match /$2/"
}
expect_nomatch() {
	! printf '%s' "$1" | grep -Eq -- "$2" || fail "$3: '$(printf '%s' "$1" | head -c 300)' matches /$2/"
}

# cordon_run [cordon run options...] -- CMD...: runs in the current workspace
# with the build directory visible read-only, report in $R; sets RC, OUT, ERR.
cordon_run() {
	R=$(mktemp "$T_TMP/report.XXXXXX")
	OUT=$("$CORDON" run --report "$R" --ro "$BUILD" "$@" 2>"$R.err")
	RC=$?
	ERR=$(cat "$R.err")
	rm -f "$R.err"
	keep_report "$R"
}
# Every report the suite produces is validated against the schema at the end.
keep_report() {
	[ -n "${REPORTS_DIR:-}" ] && [ -s "$1" ] && cp "$1" "$(mktemp "$REPORTS_DIR/report.XXXXXXXX")"
	return 0
}
# field JQ-EXPR: from the last report
field() { jq -r "$@" "$R"; }

# Every report must be valid JSON with the contract's fields.
check_report_shape() {
	jq -e '.schema == "cordon.report/1" and (.status|type) == "string" and has("exit_code") and has("signal")
	       and (.verdicts|has("containment") and has("resources") and has("task"))
	       and (.limits_hit|type) == "array" and (.usage|has("wall_seconds") and has("cpu_user_seconds")
	       and has("cpu_system_seconds") and has("peak_memory_bytes")) and (.denials|type) == "array"
	       and (.command|type) == "array" and (.policy_sha256|length) == 64 and (.inputs|type) == "array"
	       and (.outputs|type) == "array" and ([.stdout, .stderr] | all((.sha256 // .prefix_sha256 | length) == 64))
	       and (.secrets|type) == "array" and (.enforcement|has("user_ns") and has("landlock_abi")
	       and has("seccomp") and has("cgroup"))' "$R" >/dev/null || fail "report shape: $(head -c 400 "$R")"
}

# mount_count: the host's mounts, less those under other tests' workspaces
# (suites run side by side; see CORDON_JOBS in tests/run.sh).
mount_count() {
	awk -v w="${WS:-}/" -v t="${T_TMP:-}/" '
		index($5 "/", w) == 1 || index($5 "/", t) == 1 { n++; next }
		$5 ~ "^(/var)?/tmp/cordon-(test|test-tmp|vm|lanes)[.]" { next }
		{ n++ } END { print n + 0 }' /proc/self/mountinfo
}

# CORDON_TESTS=REGEX runs only the tests whose FILE:NAME matches, FILE being
# the integration file without .sh (e.g. '^(limits|network):' or
# 'test_timeout'; make test-vm picks by what differs between hosts); the
# others are not counted.
t_run() {
	local name=$1
	if [ -n "${CORDON_TESTS:-}" ] && ! [[ "$(basename "$0" .sh):$name" =~ $CORDON_TESTS ]]; then
		return 0
	fi
	if [ -n "${CORDON_SKIP:-}" ] && [[ "$(basename "$0" .sh):$name" =~ $CORDON_SKIP ]]; then
		return 0
	fi
	if [ -n "${T_OVERLAY_SKIP:-}" ] && [[ $name =~ ${T_OVERLAY_TESTS:-^$} ]]; then
		T_SKIP=$((T_SKIP + 1))
		echo "ok - $name # SKIP $T_OVERLAY_SKIP"
		echo skip >>"$RESULTS"
		return 0
	fi
	T_CUR=$name
	T_ERR=""
	local ws
	local base=${T_WS_BASE:-/tmp}
	# overlay_workspaces REGEX only: the other base for the listed tests alone
	[ -n "${T_OVERLAY_ONLY:-}" ] && ! [[ $name =~ ${T_OVERLAY_TESTS:-^$} ]] && base=/tmp
	ws=$(mktemp -d "$base/cordon-test.XXXXXX")
	chmod 755 "$ws"
	T_TMP=$(mktemp -d /tmp/cordon-test-tmp.XXXXXX)
	export T_TMP
	# An ordinary user's change-set key (changeset.h) goes below
	# XDG_STATE_HOME: the test's own, where uid 65534 can make its
	# directory (root's is /var/lib/cordon).
	local state
	state=$(mktemp -d /tmp/cordon-test-state.XXXXXX)
	chmod 1777 "$state"
	export XDG_STATE_HOME=$state
	local ok=0
	# A test that returns early (`fork_of ... || return`) says why too:
	# what fail gathered and t_assert never printed.
	( cd "$ws" && WS="$ws" "$name"
	  rc=$?
	  [ "$rc" != 0 ] && [ "$rc" != "$T_SKIP_RC" ] && [ -z "$T_ERR_SHOWN" ] && printf '%s' "$T_ERR"
	  exit "$rc" ) 2>/tmp/cordon-test-stderr.$$ >/tmp/cordon-test-out.$$ || ok=$?
	if [ $ok = "$T_SKIP_RC" ]; then
		T_SKIP=$((T_SKIP + 1))
		echo "ok - $name # SKIP $(tail -1 /tmp/cordon-test-out.$$)"
		echo skip >>"$RESULTS"
	elif [ $ok = 0 ]; then
		T_PASS=$((T_PASS + 1))
		echo "ok - $name"
		echo pass >>"$RESULTS"
	else
		T_FAIL=$((T_FAIL + 1))
		echo "not ok - $name"
		# Nothing said at all (killed from outside, or a helper that
		# returned without fail): its status, and the signal it means.
		[ -s /tmp/cordon-test-out.$$ ] || [ -s /tmp/cordon-test-stderr.$$ ] ||
			echo "ended with status $ok and no message$([ "$ok" -gt 128 ] && echo " (signal $((ok - 128)))")" >/tmp/cordon-test-out.$$
		sed 's/^/    /' /tmp/cordon-test-out.$$ | tail -20
		sed 's/^/    # /' /tmp/cordon-test-stderr.$$ | tail -20
		echo fail >>"$RESULTS"
		# The name and why, again at the end of the suite (a CI log may
		# show only its tail); one write, as the files run side by side.
		printf 'failed %s:%s\n%s\n' "$(basename "$0" .sh)" "$name" \
			"$({ tail -6 /tmp/cordon-test-out.$$; tail -4 /tmp/cordon-test-stderr.$$; } | cut -c1-300 | sed 's/^/why /')" >>"$RESULTS"
	fi
	rm -f /tmp/cordon-test-stderr.$$ /tmp/cordon-test-out.$$
	# What a test mounted in its workspace (a ramfs, say), innermost first.
	awk -v w="$ws/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount "$m"; done
	chmod -R u+w "$ws" 2>/dev/null
	rm -rf "$ws" "$T_TMP" "$state"
}

# t_skip REASON: the host lacks a feature the test needs (cgroup v1 or v2, a
# controller, a Landlock ABI, unprivileged user namespaces, idmapped tmpfs):
# `t_skip "why" || return`. Counted apart from passes and failures.
T_SKIP_RC=77
t_skip() {
	echo "$*"
	return "$T_SKIP_RC"
}

# overlay_workspaces [REGEX [only]]: as root, an overlay or review workspace needs
# an idmapped mount of it, which tmpfs has only from Linux 6.3 (Debian 12's
# /tmp on 6.1 is one; there cordon's default mode is direct). The file's
# workspaces go on the first of /tmp and /var/tmp (the disk's) where cordon
# can make one; where neither, the tests whose name matches REGEX are
# skipped with the reason; with "only", the other tests' workspaces stay on
# /tmp. Call it at the top of a file.
overlay_workspaces() {
	T_OVERLAY_TESTS=${1:-^$}
	T_OVERLAY_ONLY=""
	[ "${2:-}" = only ] && T_OVERLAY_ONLY=1
	T_OVERLAY_SKIP=""
	local base probe out=""
	for base in /tmp /var/tmp; do
		probe=$(mktemp -d "$base/cordon-test.XXXXXX") || continue
		out=$(cd "$probe" && "$CORDON" run --ro "$BUILD" --workspace-mode overlay -- /bin/true 2>&1)
		rm -rf "$probe"
		if ! printf '%s' "$out" | grep -q "no idmapped mounts"; then
			T_WS_BASE=$base
			return 0
		fi
	done
	T_OVERLAY_SKIP="no overlay workspace as root on /tmp or /var/tmp here: $(printf '%s' "$out" | tail -1)"
}

# The overlay tests' fixture (overlay.sh, protect.sh): overlay_ws makes the
# test's workspace $WS/w and goes there, so that its change set (next to
# the workspace, in $WS/.cordon-changes) goes with the test's own directory;
# changes_dir is the last report's change set; protected_of the entries it
# held back, relative to the workspace, sorted, on one line.
overlay_ws() { mkdir -p "$WS/w" && cd "$WS/w"; }
changes_dir() { field -r '.changes.dir'; }
protected_of() { field -r '[.changes.protected[] | ltrimstr("'"$WS/w/"'")] | sort | join(" ")'; }

# Test servers on the host's 127.0.0.1 (network.sh, tls.sh). A server started
# in the background, its pid in SRV, writes the port it listens on to a file:
# server_port waits for that file (up to 60 s: a Python server under
# emulation took more than 5 s; less if the server is gone) and sets PORT.
# serve starts netserver.py KIND ARGS... so; stop ends servers.
NETSERVER="$TOP/tests/netserver.py"
server_port() { # PORTFILE -> PORT
	for _ in $(seq 1200); do [ -s "$1" ] && break; kill -0 "$SRV" 2>/dev/null || break; sleep 0.05; done
	PORT=$(cat "$1")
}
serve() { # KIND ARGS... -> PORT, SRV
	local pf="$T_TMP/port.$RANDOM"
	/usr/bin/python3 "$NETSERVER" "$1" "$pf" "${@:2}" &
	SRV=$!
	server_port "$pf"
}
stop() { kill "$@" 2>/dev/null; wait "$@" 2>/dev/null; }

# The file's own exit status, for runners that look only at it (meson test;
# tests/run.sh counts from $RESULTS): 1 if a test failed, 77 (skip) if every
# test that ran was skipped, else what the file ended with.
t_exit_status() {
	local rc=$?
	if [ "$T_FAIL" != 0 ]; then
		exit 1
	elif [ "$rc" != 0 ]; then
		exit "$rc"
	elif [ "$T_PASS" = 0 ] && [ "$T_SKIP" != 0 ]; then
		exit "$T_SKIP_RC"
	fi
	exit 0
}
trap t_exit_status EXIT

# Host features, for t_skip. Where is cgroup2 mounted, and which controllers
# does our own cgroup there offer its children?
cg2_root() { awk '$9=="cgroup2"{print $5; exit}' /proc/self/mountinfo; }
cg2_self() {
	local r
	r=$(cg2_root)
	[ -n "$r" ] && echo "$r$(sed -n 's/^0:://p' /proc/self/cgroup)"
}
cg2_has() { # CONTROLLER...: every one is in our cgroup2 cgroup.controllers
	local d c
	d=$(cg2_self) || return 1
	for c in "$@"; do grep -qw "$c" "$d/cgroup.controllers" 2>/dev/null || return 1; done
}
cg1_has() { # CONTROLLER...: every one is mounted as a cgroup v1 hierarchy
	local c
	for c in "$@"; do awk -v c="$c" '$9=="cgroup" && ("," $NF ",") ~ ("," c ",") {f=1} END {exit !f}' /proc/self/mountinfo || return 1; done
}
# The backend cordon picks on this host for limits: v1, v2 or none.
cg_backend() {
	if cg2_has memory pids; then echo v2; elif cg1_has memory pids cpuacct; then echo v1; else echo none; fi
}
landlock_abi() { python3 -c 'import ctypes; print(max(ctypes.CDLL(None).syscall(444, None, 0, 1), 0))'; }

# A test function reports failure by returning non-zero; collect messages:
# use `check || return 1` patterns, and print T_ERR on failure.
t_assert() {
	if [ -n "$T_ERR" ]; then
		printf '%s' "$T_ERR"
		T_ERR_SHOWN=1
		return 1
	fi
	return 0
}

# Servers a test started (their pids in T_SERVERS, the test's own subshell's:
# `T_SERVERS+=("$pid"); trap stop_servers EXIT`) are stopped when it ends:
# SIGTERM, then SIGKILL after 10 s.
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
