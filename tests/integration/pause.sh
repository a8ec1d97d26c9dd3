# Issue 38, pause and resume: POST /v1/sessions/{id}/pause and .../resume
# (docs/api.md, "Pause and resume"). Every process of the session frozen by
# the cgroup freezer, checked in the kernel's own files (cgroup.events on
# v2, freezer.state on v1); its wall, idle and exec timeouts stopped while
# it is paused; its report lists the pauses.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve-fixture.sh"

# pause_or_skip: pauses $SID; a host without a freezer for the session
# (no cgroup, no cgroup.freeze, no v1 freezer hierarchy) skips the test.
pause_or_skip() {
	local out
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/pause")
	if [[ "$out" == *"no freezer cgroup on this host"*409 ]]; then
		t_skip "no freezer cgroup for the session on this host"
		return
	fi
	PAUSE=${out% 200}
	[ "$PAUSE" != "$out" ] || { fail "pause: $out"; return 1; }
}
# fz_state [WPID]: the session's freezer as the kernel says it now: frozen,
# thawed, or none (its cgroup gone).
fz_state() {
	local d w=${1:-$WPID}
	for d in $(find /sys/fs/cgroup -type d -name "cordon-$w-*" 2>/dev/null); do
		if [ -f "$d/freezer.state" ]; then
			case $(cat "$d/freezer.state") in FROZEN) echo frozen ;; *) echo thawed ;; esac
			return
		fi
		if [ -f "$d/cgroup.events" ]; then
			case $(sed -n 's/^frozen //p' "$d/cgroup.events") in 1) echo frozen ;; *) echo thawed ;; esac
			return
		fi
	done
	echo none
}
# until_frozen [WPID]: waits (at most 20 s: a hang guard) for the kernel
# to say the session is frozen. The pause answers within 2 s whether or
# not its processes are all frozen by then ("frozen"): on a loaded machine
# a v1 freezer stays FREEZING until each of them has run once more.
until_frozen() {
	local i
	for i in $(seq 1 400); do
		[ "$(fz_state "$@")" = frozen ] && return 0
		sleep 0.05
	done
	fail "not frozen in 20 s ($(fz_state "$@")): $(fz_tasks "$@")"
}
# fz_tasks [WPID]: each task of the session's freezer cgroup, its state and
# where it sleeps (what a freezer stuck short of frozen waits for).
fz_tasks() {
	local d w=${1:-$WPID} t
	for d in $(find /sys/fs/cgroup -type d -name "cordon-$w-*" 2>/dev/null); do
		[ -f "$d/freezer.state" ] || [ -f "$d/cgroup.freeze" ] || continue
		for t in $(cat "$d/tasks" "$d/cgroup.threads" 2>/dev/null); do
			printf '%s %s %s [%s];' "$t" "$(tr -d '\0' <"/proc/$t/comm" 2>/dev/null)" \
				"$(sed -n 's/^State:\t//p' "/proc/$t/status" 2>/dev/null)" "$(cat "/proc/$t/wchan" 2>/dev/null)"
		done
	done
}
# counter: what the session's counting loop last wrote (0 before it did).
counter() { cat "$STATE/sessions/$SID/work/n" 2>/dev/null || echo 0; }
# until_counter_above N: waits (at most 20 s: a hang guard) for the loop
# to count past N.
until_counter_above() {
	local i
	for i in $(seq 1 400); do
		[ "$(counter)" -gt "$1" ] && return 0
		sleep 0.05
	done
	fail "the counter did not pass $1 (it is $(counter))"
}

# Pause while an exec counts: the kernel says frozen, the counter stands
# still, execs and files are refused (409), GET says paused; a second pause
# changes nothing; after the resume it counts again. Paused again, DELETE
# ends it: no process and no cgroup of the session are left, and the report
# lists both pauses.
pause_case() {
	start_server || return 1
	# direct: the counter is read from the host, in the workspace itself
	new_session '{"policy":{"filesystem":{"workspace_mode":"direct"}}}' || return 1
	local out c1 c2
	out=$(api -X POST "http://cordon/v1/sessions/$SID/exec" \
		-d '{"argv":["sh","-c","i=0; while :; do i=$((i+1)); echo $i >n.tmp; mv n.tmp n; done"],"background":true}')
	expect_match "$out" '"state":"running"' "the counting exec: $out"
	until_counter_above 0 || { t_assert; return 1; }
	pause_or_skip || return
	expect_eq "$(printf '%s' "$PAUSE" | jq -r '.state + " " + (.frozen|type)')" "paused boolean" "the pause's answer: $PAUSE"
	until_frozen
	c1=$(counter)
	sleep 0.3
	expect_eq "$(fz_state)" frozen "still frozen"
	c2=$(counter)
	expect_eq "$c2" "$c1" "the counter while paused"
	expect_eq "$(api "http://cordon/v1/sessions/$SID" | jq -r .state)" paused "GET: paused"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["true"]}')" \
		'the session is paused: POST /v1/sessions/s-[0-9a-f]+/resume first.* 409$' "an exec while paused"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/files?path=n")" 'the session is paused.* 409$' "a file read while paused"
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/pause")
	expect_match "$out" '"state":"paused","frozen":true.* 200$' "a second pause: idempotent, frozen by now"
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/resume")
	expect_match "$out" '"state":"running".* 200$' "resume"
	expect_eq "$(fz_state)" thawed "the kernel's freezer state after the resume"
	until_counter_above "$c2"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/resume")" '"state":"running".* 200$' "a second resume: idempotent"
	local run
	run=$(api -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["cat","n"]}' | jq -r 'select(.type == "result") | .status')
	expect_eq "$run" ok "an exec after the resume"
	pause_or_skip || return
	until_frozen
	api -X DELETE "http://cordon/v1/sessions/$SID" >"$T_TMP/end.json"
	R=$T_TMP/end.json
	keep_report "$R"
	expect_eq "$(field .session.end)" deleted "deleted while paused"
	expect_eq "$(field '.session.paused | length')" 2 "two pauses: $(field -c .session.paused)"
	expect_eq "$(field '[.session.paused[] | .end >= .start] | all')" true "each pause ends after it starts"
	expect_eq "$(field '.session.paused[1].start >= .session.paused[0].end')" true "in order"
	expect_eq "$(field '.session.paused_seconds > 0.3')" true "paused_seconds counts the first pause's 0.3 s at least"
	expect_eq "$(field -c '[.execs[0].status, (.execs[0].usage.paused_seconds > 0)]')" '["session-ended",true]' \
		"the counting exec ended with the session, its pauses counted"
	local i
	for i in $(seq 1 200); do
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	expect_eq "$(kill -0 "$WPID" 2>/dev/null && echo alive || echo gone)" gone "the session's worker"
	expect_eq "$(find /sys/fs/cgroup -type d -name "cordon-$WPID-*" 2>/dev/null)" "" "no cgroup of the session is left"
	expect_eq "$(counter)" "$(counter)" "nothing counts any more"
	kill -TERM "$SRV"
	wait "$SRV"
}
test_pause_freezes_and_resumes() {
	[ "$(cg_backend)" != none ] || { t_skip "no cgroup hierarchy for the session"; return; }
	pause_case || return
	t_assert
}
# The same on cgroup v2 where the unified hierarchy offers it (a hybrid
# host's backend is v1).
test_pause_freezes_and_resumes_v2() {
	[ -n "$(cg2_root)" ] && [ "$(cg_backend)" != v2 ] || { t_skip "the host's backend is cgroup v2 already, or it has none"; return; }
	CORDON_CGROUP=v2 pause_case || return
	t_assert
}

# A session whose shell vforks command after command (dash vforks each):
# a parent that sleeps for its child after the freezer asked it once
# to freeze stays unfrozen while the child is frozen before its exec, and
# a v1 freezer stayed FREEZING for good. Paused and resumed five times,
# each pause reaches frozen.
test_pause_vfork_loop() {
	[ "$(cg_backend)" != none ] || { t_skip "no cgroup hierarchy for the session"; return; }
	start_server || return 1
	new_session || return 1
	local out i
	for i in 1 2; do
		out=$(api -X POST "http://cordon/v1/sessions/$SID/exec" \
			-d '{"argv":["/bin/sh","-c","while :; do /bin/true; done"],"background":true}')
		expect_match "$out" '"state":"running"' "a vfork loop: $out"
	done
	for i in 1 2 3 4 5; do
		pause_or_skip || return
		until_frozen || break
		expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/pause")" '"frozen":true.* 200$' "pause $i: frozen"
		expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/resume")" '"state":"running".* 200$' "resume $i"
	done
	api -X DELETE "http://cordon/v1/sessions/$SID" >/dev/null
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A paused session's clocks stand still: its exec's 5 s timeout, its own
# 6 s wall time and another session's 5 s idle timeout do not fire during a
# pause of 7 s; each goes on from its time left after the resume (the exec
# times out, then the session; the idle one ends by its idle timeout). The
# set-up before the pause must take less than those 5 s: not in the
# emulated test guest, where a call can take seconds (the freezer itself
# is tested there by test_pause_freezes_and_resumes).
test_pause_stops_the_clocks() {
	[ "$(cg_backend)" != none ] || { t_skip "no cgroup hierarchy for the session"; return; }
	[ -z "${CORDON_TEST_SLOW:-}" ] || { t_skip "an emulated machine: its set-up may outlast the timeouts"; return; }
	start_server || return 1
	new_session '{"timeout":"6s"}' || return 1
	local s1=$SID w1=$WPID out i
	api -N -X POST "http://cordon/v1/sessions/$s1/exec" \
		-d '{"argv":["sh","-c","echo up; while :; do sleep 0.05; done"],"timeout":"5s"}' >"$T_TMP/x" &
	local xpid=$!
	for i in $(seq 1 400); do
		grep -q stdout "$T_TMP/x" 2>/dev/null && break
		sleep 0.05
	done
	local eid
	eid=$(head -1 "$T_TMP/x" | jq -r .exec)
	pause_or_skip || return
	new_session '{"idle_timeout":"5s"}' || return 1
	local s2=$SID w2=$WPID
	SID=$s2 pause_or_skip || return
	until_frozen "$w1"
	until_frozen "$w2"
	# Longer than every timeout of theirs.
	sleep 7
	expect_eq "$(api "http://cordon/v1/sessions/$s1" | jq -r .state)" paused "the 6 s session after 7 s paused"
	expect_eq "$(api "http://cordon/v1/sessions/$s1/exec/$eid" | jq -r .state)" running "its exec of 5 s after 7 s paused"
	expect_eq "$(api "http://cordon/v1/sessions/$s2" | jq -r .state)" paused "the session of 5 s idle after 7 s paused"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$s1/resume")" '"state":"running".* 200$' "resume"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$s2/resume")" '"state":"running".* 200$' "resume the other"
	wait "$xpid"
	out=$(jq -c 'select(.type == "result")' "$T_TMP/x")
	expect_eq "$(printf '%s' "$out" | jq -r .status)" timeout "the exec's timeout, after the resume: $out"
	expect_eq "$(printf '%s' "$out" | jq -r '.usage.paused_seconds >= 7 and .usage.wall_seconds >= .usage.paused_seconds + 4')" true \
		"its pause is part of its wall time, not of its 5 s: $(printf '%s' "$out" | jq -c .usage)"
	# The sessions end by themselves: a wait with a hang guard (20 s).
	for i in $(seq 1 400); do
		[ "$(api "http://cordon/v1/sessions/$s1" | jq -r .state)" = ended ] &&
			[ "$(api "http://cordon/v1/sessions/$s2" | jq -r .state)" = ended ] && break
		sleep 0.05
	done
	R=$T_TMP/r1.json
	api "http://cordon/v1/sessions/$s1/report" >"$R"
	keep_report "$R"
	expect_eq "$(field -c '[.status, .session.end, (.session.paused | length)]')" '["timeout","wall-timeout",1]' "the 6 s session"
	expect_eq "$(field '.session.paused_seconds >= 7 and .usage.wall_seconds >= .session.paused_seconds + 6')" true \
		"its wall time: 6 s besides the pause ($(field -c '[.usage.wall_seconds, .session.paused_seconds]'))"
	R=$T_TMP/r2.json
	api "http://cordon/v1/sessions/$s2/report" >"$R"
	keep_report "$R"
	expect_eq "$(field -c '[.session.end, (.session.paused | length)]')" '["idle-timeout",1]' "the idle session"
	expect_eq "$(field '.usage.wall_seconds >= .session.paused_seconds + 5')" true "its idle time: 5 s besides the pause"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A pause is bounded (--max-pause): a session left paused past it ends,
# its report says why (session.end "pause-limit") and no process or cgroup
# of it is left. --max-pause 0 (an unbounded pause) is refused.
test_pause_limit_ends_the_session() {
	[ "$(cg_backend)" != none ] || { t_skip "no cgroup hierarchy for the session"; return; }
	local err
	err=$("$CORDON" serve --socket "$T_TMP/x.sock" --max-pause 0 2>&1)
	expect_eq "$?" 2 "--max-pause 0 refused"
	expect_match "$err" '--max-pause' "the error names the option: $err"
	start_server --max-pause 1s || return 1
	new_session || return 1
	pause_or_skip || return
	local i code
	for i in $(seq 1 400); do
		code=$(api_code "http://cordon/v1/sessions/$SID")
		[[ "$code" == *'"state":"ended"'* ]] && break
		sleep 0.05
	done
	expect_match "$code" '"state":"ended".* 200$' "ended by itself"
	api "http://cordon/v1/sessions/$SID/report" >"$T_TMP/end.json"
	R=$T_TMP/end.json
	keep_report "$R"
	expect_eq "$(field .session.end)" pause-limit "why it ended"
	for i in $(seq 1 200); do
		kill -0 "$WPID" 2>/dev/null || break
		sleep 0.05
	done
	expect_eq "$(kill -0 "$WPID" 2>/dev/null && echo alive || echo gone)" gone "the session's worker"
	expect_eq "$(find /sys/fs/cgroup -type d -name "cordon-$WPID-*" 2>/dev/null)" "" "no cgroup of the session is left"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Not a session's, or not one: 404; pause is POST only.
test_pause_routes() {
	start_server || return 1
	expect_match "$(api_code -X POST http://cordon/v1/sessions/s-0123456789abcdef/pause)" ' 404$' "no such session"
	new_session || return 1
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/pause")" ' 405$' "GET pause"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/resume")" '"state":"running".* 200$' "resume of a running session"
	api -X DELETE "http://cordon/v1/sessions/$SID" >/dev/null
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/pause")" ' 410$' "an ended session"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

for t in test_pause_freezes_and_resumes test_pause_freezes_and_resumes_v2 test_pause_vfork_loop test_pause_stops_the_clocks test_pause_limit_ends_the_session test_pause_routes; do
	t_run $t
done
