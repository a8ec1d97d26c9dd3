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

# Stopped by the limit, not by the command's end: it started, and never got
# past its sleep (no upper bound in seconds: a loaded machine only makes the
# run longer). The lower bound is the limit itself: a run stopped before it
# is a bug on any machine, and a slower one only adds to the figure.
test_timeout() {
	cordon_run --time-limit 300ms -- /bin/sh -c "echo started; $HOSTILE sleep 30; echo finished"
	status_is timeout 124 wall_time
	# Stopped before it finished, after it started (the limit counts from
	# the exec). Whether the shell got as far as its echo within 300 ms is
	# the machine's speed, not cordon's: in the qemu guest under load it
	# once did not (CI, session 7).
	expect_eq "$(field -c '.usage.setup_seconds != null')" true "the command was started"
	case "$OUT" in "" | started) ;; *) fail "the command got past its sleep: '$OUT'" ;; esac
	local w
	w=$(field .usage.wall_seconds)
	awk -v w="$w" 'BEGIN{exit !(w >= 0.3)}' || fail "wall $w: stopped before the limit"
	t_assert
}

test_timeout_kills_background_children() {
	cordon_run --time-limit 300ms -- /bin/sh -c "$HOSTILE sleep 30 & $HOSTILE sleep 30 & wait"
	status_is timeout 124 wall_time
	sleep 0.2
	[ -z "$(pgrep -f "^$HOSTILE sleep 30\$" | while read -r p; do grep -q '^State:.*Z' /proc/$p/status 2>/dev/null || echo $p; done)" ] || fail "a child survived"
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
	# The v2 backend runs and accounts CPU from cpu.stat everywhere cgroup2
	# is mounted; where our cgroup there offers no memory controller (a
	# hybrid host like this one), it refuses a memory limit instead of
	# running without it.
	grep -q cgroup2 /proc/self/mountinfo || { t_skip "no cgroup2 hierarchy is mounted"; return; }
	CORDON_CGROUP=v2 cordon_run -- "$HOSTILE" exit 0
	status_is ok 0
	expect_eq "$(field .enforcement.cgroup)" v2 "backend"
	if ! cg2_has memory; then
		CORDON_CGROUP=v2 cordon_run --memory-limit 64M -- /bin/true
		status_is setup-error 125
		expect_match "$(field .reason)" "memory controller is not available" "reason"
	fi
	t_assert
}

# Our cgroup2 cgroup's children named cordon-PID-N (runs) whose supervisor
# PID has ended, sorted: what a run left behind. A live supervisor's cgroup
# (another suite's run, side by side) is not a leftover.
v2_run_cgroups() {
	local d p
	find "$(cg2_self)" -mindepth 1 -maxdepth 1 -type d -name 'cordon-[0-9]*-[0-9]*' | sort | while read -r d; do
		p=${d##*/cordon-}
		[ -d "/proc/${p%%-*}" ] || echo "$d"
	done
}

test_cgroup_v2_limits() {
	# Pure cgroup v2 (every current distribution): memory.max with
	# memory.swap.max 0, pids.max, cpu.stat, memory.events and pids.events,
	# the child cloned straight into its cgroup (CLONE_INTO_CGROUP).
	cg2_has memory pids || { t_skip "our cgroup2 cgroup offers no memory and pids controllers (they are on cgroup v1 here)"; return; }
	local before
	before=$(v2_run_cgroups)
	CORDON_CGROUP=v2 cordon_run --memory-limit 48M --pids-limit 20 -- /bin/sh -c '
		cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max
		cat /sys/fs/cgroup/memory.swap.max 2>/dev/null || echo no swap accounting
		cat /proc/self/cgroup; sort -n /sys/fs/cgroup/cgroup.procs | head -1'
	status_is ok 0
	expect_eq "$OUT" $'50331648\n20\n0\n0::/\n1' "the run's cgroup from its first instruction: $ERR"
	expect_eq "$(field .enforcement.cgroup)" v2 "backend"
	CORDON_CGROUP=v2 cordon_run --memory-limit 32M -- "$HOSTILE" membomb
	status_is memory-limit 118 memory
	local peak
	peak=$(field .usage.peak_memory_bytes)
	[ "$peak" -le $((34 * 1024 * 1024)) ] && [ "$peak" -ge $((16 * 1024 * 1024)) ] || fail "peak $peak"
	CORDON_CGROUP=v2 cordon_run --pids-limit 16 --time-limit 1 -- "$HOSTILE" forkbomb
	status_is timeout 124 pids
	CORDON_CGROUP=v2 cordon_run --cpu-limit 0.3 -- "$HOSTILE" spin
	status_is cpu-limit 119 cpu_time
	awk -v c="$(field '.usage.cpu_user_seconds + .usage.cpu_system_seconds')" 'BEGIN{exit !(c >= 0.25)}' ||
		fail "cpu.stat usage $(field .usage)"
	expect_eq "$(v2_run_cgroups)" "$before" "no run's cgroup is left behind"
	t_assert
}

test_cgroup_v2_delegated_unprivileged() {
	# An ordinary user in a cgroup delegated the way systemd's Delegate=yes
	# makes one (the directory, cgroup.procs, cgroup.subtree_control and
	# cgroup.threads chowned; memory and pids enabled above it) runs with
	# memory and pids limits: cordon, alone there, moves into a leaf of its
	# own and gives the runs' cgroups the controllers.
	[ "$(id -u)" = 0 ] || { t_skip "needs root to delegate a cgroup"; return; }
	cg2_has memory pids || { t_skip "our cgroup2 cgroup offers no memory and pids controllers (they are on cgroup v1 here)"; return; }
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null ||
		{ t_skip "unprivileged user namespaces are disabled on this host"; return; }
	local self d
	self=$(cg2_self)
	echo "+memory +pids" >"$self/cgroup.subtree_control" 2>/dev/null ||
		{ t_skip "cannot enable memory and pids below our own cgroup (it has other processes and is not the root)"; return; }
	chmod 777 "$WS"
	R=$WS/r.json
	# Each run in a delegated cgroup of its own, as systemd-run --scope -p
	# Delegate=yes makes (a cgroup whose children have controllers takes
	# no process).
	as_delegated() { # cordon run args..., as uid 65534 alone in a fresh $d
		d=$self/cordon-test-delegated-$$-$((++n))
		mkdir "$d" && chown 65534:65534 "$d" "$d/cgroup.procs" "$d/cgroup.subtree_control" "$d/cgroup.threads" || return 1
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"' \
			sh "$d" "$CORDON" run --report "$R" --ro "$BUILD" "$@" 2>&1
	}
	local n=0
	as_delegated --memory-limit 32M -- "$HOSTILE" membomb >"$T_TMP/out"
	RC=$?
	OUT=$(cat "$T_TMP/out")
	keep_report "$R"
	status_is memory-limit 118 memory
	expect_eq "$(field .enforcement.cgroup):$(field .enforcement.user_ns)" v2:true "backend: $OUT"
	expect_eq "$(field .enforcement.workspace_ownership)" invoking-uid "an ordinary user's run is that user"
	as_delegated --pids-limit 16 --time-limit 1 -- "$HOSTILE" forkbomb >"$T_TMP/out"
	RC=$?
	OUT=$(cat "$T_TMP/out")
	keep_report "$R"
	status_is timeout 124 pids
	expect_eq "$(find "$d" -mindepth 1 -maxdepth 1 -type d -name 'cordon-[0-9]*-[0-9]*' | wc -l)" 0 "the runs' cgroups are gone"
	expect_match "$(ls "$d")" "cordon-[0-9]+-supervisor" "cordon moved into a leaf of its own"
	local i
	for i in $(seq "$n"); do
		find "$self/cordon-test-delegated-$$-$i" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
		rmdir "$self/cordon-test-delegated-$$-$i"
	done
	t_assert
}

test_cgroup_v1_refusal_names_the_directory() {
	# An ordinary user without a delegated cgroup v1 hierarchy: the refusal
	# names the directory it could not make (issue 28: the name was cleared
	# before the message used it, "mkdir : Permission denied").
	[ "$(id -u)" = 0 ] || { t_skip "needs root to run as another user"; return; }
	cg1_has memory || { t_skip "no cgroup v1 memory hierarchy here"; return; }
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null ||
		{ t_skip "unprivileged user namespaces are disabled on this host"; return; }
	chmod 777 "$WS"
	OUT=$(cd "$WS" && HOME=$WS setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$CORDON" run --workspace-mode direct --rw "$WS" --memory-limit 32M -- true 2>&1)
	RC=$?
	expect_eq "$RC" 125 "exit status: $OUT"
	expect_match "$OUT" "cgroup v1: mkdir /[^ ]*/cordon-[0-9]+-[0-9]+: Permission denied" "the refusal names the directory"
	t_assert
}

for t in test_ok test_exit_nonzero test_signaled test_timeout test_timeout_kills_background_children \
	test_cpu_limit test_cpu_limit_counts_all_processes test_memory_limit test_fork_bomb_stopped \
	test_output_limit test_file_size_limit test_policy_limits test_flag_overrides_policy \
	test_cgroup_v2_backend test_cgroup_v2_limits test_cgroup_v2_delegated_unprivileged test_cgroup_v1_refusal_names_the_directory; do
	t_run $t
done
