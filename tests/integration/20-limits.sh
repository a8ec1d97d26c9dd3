# Each limit and each status, produced by a real program.
. "$(dirname "$0")/../lib.sh"

status_is() { # STATUS EXIT LIMIT_HIT
	expect_eq "$(field .status)" "$1" "status"
	expect_eq "$RC" "$2" "exit code"
	if [ -n "${3:-}" ]; then
		expect_match "$(field '.limits_hit | join(",")')" "$3" "limits_hit"
		expect_eq "$(field .verdicts.resources)" exceeded "resources verdict"
	fi
	check_report_shape
}

test_ok() {
	cordon_run -- /bin/true
	status_is ok 0
	expect_eq "$(field .verdicts.resources)" within "within"
	expect_eq "$(field .verdicts.containment)" clean "clean"
	expect_eq "$(field .verdicts.task)" not-run "task"
	t_assert
}

test_exit_nonzero() {
	cordon_run -- "$HOSTILE" exit 7
	status_is exit-nonzero 7
	expect_eq "$(field .exit_code)" 7 "exit_code"
	t_assert
}

test_signaled() {
	cordon_run -- "$HOSTILE" signal 11
	status_is signaled 139
	expect_eq "$(field .signal)" SIGSEGV "signal"
	t_assert
}

test_timeout() {
	cordon_run --time-limit 300ms -- "$HOSTILE" sleep 10
	status_is timeout 124 wall_time
	local w
	w=$(field .usage.wall_seconds)
	awk -v w="$w" 'BEGIN{exit !(w >= 0.3 && w < 2)}' || fail "wall $w not near 0.3 s"
	t_assert
}

test_timeout_kills_background_children() {
	cordon_run --time-limit 300ms -- /bin/sh -c "$HOSTILE sleep 30 & $HOSTILE sleep 30 & wait"
	status_is timeout 124 wall_time
	sleep 0.2
	[ -z "$(pgrep -f 'probe-hostile sleep 30' | while read -r p; do grep -q '^State:.*Z' /proc/$p/status 2>/dev/null || echo $p; done)" ] || fail "a child survived"
	t_assert
}

test_cpu_limit() {
	cordon_run --cpu-limit 0.4 -- "$HOSTILE" spin
	status_is cpu-limit 119 cpu_time
	local c
	c=$(field '.usage.cpu_user_seconds + .usage.cpu_system_seconds')
	awk -v c="$c" 'BEGIN{exit !(c >= 0.35 && c < 2.5)}' || fail "cpu $c not near 0.4 s"
	t_assert
}

test_cpu_limit_counts_all_processes() {
	# Two processes that each stop after 0.7 s of their own CPU time: only
	# when the CPU of both is added up is the 1 s limit reached (a
	# per-process limit never would be). No wall clock involved.
	local burn='import time
while time.process_time() < 0.7: pass'
	cordon_run --cpu-limit 1 -- /bin/sh -c "python3 -c '$burn' & python3 -c '$burn'; wait"
	status_is cpu-limit 119 cpu_time
	awk -v u="$(field .usage.cpu_user_seconds)" -v s="$(field .usage.cpu_system_seconds)" \
		'BEGIN{exit !(u + s >= 1.0)}' || fail "cpu $(field .usage.cpu_user_seconds) below the limit"
	t_assert
}

test_memory_limit() {
	cordon_run --memory-limit 32M -- "$HOSTILE" membomb
	status_is memory-limit 118 memory
	local peak
	peak=$(field .usage.peak_memory_bytes)
	[ "$peak" -le $((34 * 1024 * 1024)) ] && [ "$peak" -ge $((16 * 1024 * 1024)) ] || fail "peak $peak"
	t_assert
}

test_fork_bomb_stopped() {
	cordon_run --pids-limit 16 --time-limit 1 -- "$HOSTILE" forkbomb
	status_is timeout 124 pids
	t_assert
}

test_output_limit() {
	cordon_run --output-limit 100K -- "$HOSTILE" flood
	status_is output-limit 120 output
	expect_eq "$(printf '%s' "$OUT" | wc -c)" 102400 "exactly the limit forwarded"
	expect_eq "$(field .stdout.bytes)" 102400 "counted"
	t_assert
}

test_file_size_limit() {
	cordon_run --file-size-limit 256K -- "$HOSTILE" bigfile big.bin
	status_is file-size-limit 121 file_size
	expect_eq "$(stat -c %s big.bin)" 262144 "file stopped at the limit"
	t_assert
}

test_policy_limits() {
	cat >p.json <<'J'
{"limits": {"wall_time": "300ms", "memory": "64M"}}
J
	cordon_run --policy p.json -- "$HOSTILE" sleep 5
	status_is timeout 124 wall_time
	expect_eq "$(field .limits.memory.value)" 67108864 "memory limit in report"
	expect_eq "$(field .limits.memory.source)" policy "source"
	t_assert
}

test_flag_overrides_policy() {
	echo '{"limits": {"wall_time": "10s"}}' >p.json
	cordon_run --policy p.json --time-limit 200ms -- "$HOSTILE" sleep 5
	status_is timeout 124 wall_time
	expect_eq "$(field .limits.wall_time.source)" flag "source"
	t_assert
}

test_cgroup_v2_backend() {
	# This host's cgroup2 hierarchy has no memory/pids controllers: the v2
	# backend still runs, accounts CPU from cpu.stat, and refuses limits it
	# cannot enforce instead of running without them.
	if ! grep -q cgroup2 /proc/self/mountinfo; then echo "no cgroup2 mounted"; return 1; fi
	CORDON_CGROUP=v2 cordon_run -- "$HOSTILE" exit 0
	status_is ok 0
	expect_eq "$(field .enforcement.cgroup)" v2 "backend"
	if ! grep -qw memory "$(awk '$9=="cgroup2"{print $5}' /proc/self/mountinfo | head -1)/cgroup.controllers" 2>/dev/null; then
		CORDON_CGROUP=v2 cordon_run --memory-limit 64M -- /bin/true
		status_is setup-error 125
		expect_match "$(field .reason)" "memory controller is not available" "reason"
	fi
	t_assert
}

for t in test_ok test_exit_nonzero test_signaled test_timeout test_timeout_kills_background_children \
	test_cpu_limit test_cpu_limit_counts_all_processes test_memory_limit test_fork_bomb_stopped \
	test_output_limit test_file_size_limit test_policy_limits test_flag_overrides_policy \
	test_cgroup_v2_backend; do
	t_run $t
done
