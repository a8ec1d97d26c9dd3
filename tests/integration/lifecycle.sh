# Setup failures never start the command; nothing outlives a run.
. "$(dirname "$0")/../lib.sh"

never_started() { # the marker the command would have written
	[ ! -e started ] || fail "the command was started"
	expect_eq "$(field .status)" setup-error "status"
	expect_eq "$RC" 125 "exit code"
	check_report_shape
}

test_missing_bind_path() {
	cordon_run --ro /no/such/path -- /bin/sh -c 'touch started'
	never_started
	expect_match "$(field .reason)" "^ro /no/such/path: .*No such file" "reason names the path"
	expect_match "$ERR" "^cordon: setup-error: ro /no/such/path" "one-line error"
	t_assert
}

test_bad_policy_refused_with_position() {
	printf '{\n  "limits": {\n    "memroy": "1M"\n  }\n}\n' >p.json
	cordon_run --policy p.json -- /bin/sh -c 'touch started'
	never_started
	expect_match "$ERR" 'p.json:3:5: unknown key "memroy" in "limits"' "line:column"
	expect_eq "$(printf '%s\n' "$ERR" | wc -l)" 1 "one line"
	t_assert
}

test_malformed_size_refused() {
	cordon_run --memory-limit 12Q -- /bin/sh -c 'touch started'
	never_started
	expect_match "$ERR" 'malformed size "12Q"' "message"
	echo '{"limits": {"output": "1.5M"}}' >p.json
	cordon_run --policy p.json -- /bin/sh -c 'touch started'
	never_started
	expect_match "$ERR" 'p.json:1:23: "limits.output": malformed size' "policy position"
	t_assert
}

test_duplicate_key_refused() {
	echo '{"check": "a", "check": "b"}' >p.json
	cordon_run --policy p.json -- /bin/sh -c 'touch started'
	never_started
	expect_match "$ERR" 'p.json:1:16: duplicate key "check"' "message"
	t_assert
}

test_exec_failure_is_setup_error() {
	cordon_run -- ./does-not-exist
	expect_eq "$(field .status)" setup-error "status"
	expect_match "$(field .reason)" "exec ./does-not-exist: No such file" "reason"
	t_assert
}

test_unknown_option() {
	cordon_run --bogus -- /bin/sh -c 'touch started'
	never_started
	expect_match "$ERR" 'unknown option "--bogus"' "message"
	t_assert
}

test_daemon_killed_at_end() {
	cordon_run -- "$HOSTILE" daemon "$WS/beat"
	expect_eq "$(field .status)" ok "status"
	local a b
	sleep 0.3
	a=$(stat -c %s beat 2>/dev/null || echo 0)
	sleep 0.4
	b=$(stat -c %s beat 2>/dev/null || echo 0)
	expect_eq "$b" "$a" "the daemon kept writing after the run ended"
	t_assert
}

test_zombies_reaped() {
	cordon_run -- /bin/sh -c "$HOSTILE zombies; sleep 0.2; ps -eo stat= | grep -c Z"
	expect_match "$OUT" "^0$" "zombies were reaped by the run's init"
	t_assert
}

test_supervisor_sigkill_leaves_no_survivor() {
	"$CORDON" run --ro "$BUILD" -- /bin/sh -c "$HOSTILE sleep 60 & $HOSTILE sleep 61" &
	local sup=$!
	local i
	for i in $(seq 600); do # waits for the run, not for a fixed time
		[ "$(pgrep -fc "^$HOSTILE sleep 6[01]$")" = 2 ] && break
		sleep 0.05
	done
	pgrep -f "^$HOSTILE sleep 6[01]$" >/dev/null || fail "the run did not start"
	kill -9 $sup
	sleep 0.3
	local alive
	alive=$(pgrep -f "^$HOSTILE sleep 6[01]$" | while read -r p; do
		grep -q '^State:.*Z' /proc/$p/status 2>/dev/null || echo "$p"; done)
	[ -z "$alive" ] || fail "survivors: $alive"
	t_assert
}

test_report_written_atomically() {
	cordon_run -- /bin/true
	ls "$(dirname "$R")" | grep -q "$(basename "$R").tmp" && fail "temporary report left behind"
	# an unwritable report location is an error, not a silent success
	"$CORDON" run --report /proc/nope/report.json -- /bin/true 2>err.txt
	local rc=$?
	[ $rc != 0 ] || fail "exit 0 although the report could not be written"
	expect_match "$(cat err.txt)" "report" "message"
	t_assert
}

test_reader_going_away() {
	# `cordon run -- yes | head -1` behaves like `yes | head -1`: the command
	# gets SIGPIPE, and cordon survives to write its report.
	"$CORDON" run --report r.json --time-limit 10 -- yes | head -1 >/dev/null
	local rc=${PIPESTATUS[0]}
	expect_eq "$rc" 141 "exit status as in a shell pipeline"
	expect_eq "$(jq -r .status r.json)" signaled "status"
	expect_eq "$(jq -r .signal r.json)" SIGPIPE "signal"
	keep_report r.json
	t_assert
}

test_closed_standard_descriptors() {
	"$CORDON" run --report r.json -- /bin/sh -c 'test -e /proc/self/fd/0 && echo x >&2' 0<&- 1>&- 2>err.txt
	expect_eq "$(jq -r .status r.json)" ok "runs with 0 and 1 closed"
	expect_eq "$(jq -r .stderr.bytes r.json)" 2 "the command's stdin is /dev/null, not one of cordon's descriptors"
	keep_report r.json
	t_assert
}

test_no_leaks_after_200_runs() {
	# Only what this test's own runs made is counted, by name: the cgroups
	# cordon-PID-* and the sandbox uid SANDBOX_HOST_BASE + PID of each of
	# its supervisors (other suites may run beside it on the same host).
	local mounts_before pids="" pid cgs_before
	mounts_before=$(mount_count)
	# Leftovers already there (a SIGKILLed supervisor's, until the next
	# once-a-minute look) are not this test's even where a PID of its runs
	# is theirs again.
	cgs_before=$(find /sys/fs/cgroup -maxdepth 4 -name 'cordon-*' 2>/dev/null | sort)
	# CORDON_LEAK_RUNS: fewer under emulation (make test-vm), with limits.
	for i in $(seq "${CORDON_LEAK_RUNS:-200}"); do
		"$CORDON" run ${CORDON_LEAK_RUNS:+--memory-limit 64M --pids-limit 32} -- /bin/true &
		pid=$!
		wait $pid || { fail "run $i failed"; break; }
		pids="$pids $pid"
	done
	expect_eq "$(mount_count)" "$mounts_before" "mounts"
	# PIDs wrap (pid_max may be 32768) in a long suite: a PID of one of
	# these runs may be a live process of another test by now, whose
	# cgroup (a serve session's worker) or sandbox uid is named after it.
	# Those are not this test's: only the PIDs no process has now count.
	local dead="" p
	for p in $pids; do kill -0 "$p" 2>/dev/null || dead="$dead $p"; done
	pids=$dead
	local cgs left
	cgs=$(find /sys/fs/cgroup -maxdepth 4 -name 'cordon-*' 2>/dev/null | sort | comm -13 <(echo "$cgs_before") - |
		awk -v p="$pids" 'BEGIN { n = split(p, a, " "); for (i = 1; i <= n; i++) mine[a[i]] = 1 }
			{ split($0, c, "/"); split(c[length(c)], f, "-"); if (f[2] in mine) print }')
	left=$(ps -eo uid=,stat= |
		awk -v p="$pids" 'BEGIN { n = split(p, a, " "); for (i = 1; i <= n; i++) mine[805306368 + a[i]] = 1 }
			$2 !~ /Z/ && ($1 in mine) { k++ } END { print k + 0 }')
	expect_eq "$(printf '%s' "$cgs" | grep -c .)" 0 "cgroups of this test's runs ($(echo $cgs))"
	expect_eq "$left" 0 "processes of this test's sandbox uids"
	t_assert
}

for t in test_missing_bind_path test_bad_policy_refused_with_position test_malformed_size_refused \
	test_duplicate_key_refused test_exec_failure_is_setup_error test_unknown_option \
	test_daemon_killed_at_end test_zombies_reaped test_supervisor_sigkill_leaves_no_survivor \
	test_report_written_atomically test_reader_going_away test_closed_standard_descriptors test_no_leaks_after_200_runs; do
	t_run $t
done
