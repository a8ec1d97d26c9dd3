# Issue 38, snapshots: POST /v1/sessions/{id}/snapshots, GET, DELETE
# .../snapshots/{sid} (docs/api.md, "Snapshots"). A snapshot is a copy of
# the workspace's overlay upper layer, taken with the session frozen, kept
# in the session's state directory, bounded by limits.snapshots (429) and
# by its entries (413), removed with the session.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../serve-fixture.sh"
# A session's overlay workspace needs, as root, an idmapped mount of it,
# which Debian 12's /tmp (tmpfs on 6.1) cannot have: there the tests'
# workspaces (and so the servers' state) go on /var/tmp.
overlay_workspaces '^test_' only

# run_in CMD: an exec of sh -c CMD in the session; its status.
run_in() {
	api -X POST "http://cordon/v1/sessions/$SID/exec" -d "$(jq -nc --arg c "$1" '{argv:["sh","-c",$c]}')" |
		jq -r 'select(.type == "result") | .status'
}
# snapshot_or_skip: a snapshot of $SID in $SNAP (its answer) and $PID_; a
# host where the session's workspace has no overlay (direct instead) skips.
snapshot_or_skip() {
	local out
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots")
	if [[ "$out" == *"its workspace mode is direct"*409 ]]; then
		t_skip "no overlay workspace for a session on this host"
		return
	fi
	SNAP=${out% 201}
	[ "$SNAP" != "$out" ] || { fail "snapshot: $out"; return 1; }
	PID_=$(printf '%s' "$SNAP" | jq -r .snapshot)
}
snapdir() { echo "$STATE/sessions/$SID/snapshots/$1"; }

# Each call: a snapshot holds the workspace's changes (files, a hard link
# kept as a link, a protected path as it is, a link to /etc/passwd as a
# link, a FIFO), later writes are not in it; GET lists it; DELETE removes
# it; the session's end removes them all.
test_snapshot_calls() {
	start_server || return 1
	new_session || return 1
	expect_eq "$(run_in 'echo one >a; mkdir -p d .git/hooks; echo x >d/f; ln d/f hl; echo "#!/bin/sh" >.git/hooks/pre-commit; ln -s /etc/passwd pw; mkfifo ff')" ok "the writes"
	snapshot_or_skip || return
	expect_match "$PID_" '^p-[0-9a-f]{16}$' "its id: $SNAP"
	expect_eq "$(printf '%s' "$SNAP" | jq -c '[.files, .bytes, (.created | test("^[0-9-]+T[0-9:]+Z$"))]')" '[3,16,true]' "its counts: $SNAP"
	local d
	d=$(snapdir "$PID_")
	expect_eq "$(cat "$d/a")" one "a in the snapshot"
	expect_eq "$(stat -c %i "$d/hl")" "$(stat -c %i "$d/d/f")" "the hard link, a link in the copy"
	expect_eq "$(cat "$d/.git/hooks/pre-commit")" '#!/bin/sh' "the protected path, as it is"
	expect_eq "$(readlink "$d/pw")" /etc/passwd "the link, as a link"
	[ -p "$d/ff" ] || fail "the FIFO, made anew"
	expect_eq "$(stat -c %a "$STATE/sessions/$SID/snapshots")" 700 "the snapshots' directory: the server's alone"
	expect_eq "$(run_in 'echo two >a; echo new >b')" ok "later writes"
	expect_eq "$(cat "$d/a")" one "not in the snapshot"
	[ ! -e "$d/b" ] || fail "b is not in the snapshot"
	snapshot_or_skip || return
	local p2=$PID_
	local list
	list=$(api "http://cordon/v1/sessions/$SID/snapshots")
	expect_eq "$(printf '%s' "$list" | jq -c '[.snapshots[].snapshot] | length')" 2 "GET lists both: $list"
	expect_eq "$(printf '%s' "$list" | jq -r '.budget')" 1073741824 "the default budget, 1G"
	expect_match "$(api_code -X DELETE "http://cordon/v1/sessions/$SID/snapshots/$p2")" '"deleted":"p-.* 200$' "DELETE"
	[ ! -e "$(snapdir "$p2")" ] || fail "the deleted snapshot's directory"
	expect_match "$(api_code -X DELETE "http://cordon/v1/sessions/$SID/snapshots/$p2")" 'no such snapshot.* 404$' "DELETE again"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots/$p2")" ' 405$' "POST a snapshot's path"
	expect_match "$(api_code -X DELETE "http://cordon/v1/sessions/$SID/snapshots/x-0123456789abcdef")" ' 404$' "not a snapshot id"
	api -X DELETE "http://cordon/v1/sessions/$SID" >/dev/null
	[ ! -e "$STATE/sessions/$SID/snapshots" ] || fail "the snapshots outlive their session: $(ls "$STATE/sessions/$SID/snapshots")"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A snapshot while an exec runs: the exec is frozen for the copy and goes
# on after it (thawed), a paused session stays paused.
test_snapshot_while_running() {
	start_server || return 1
	new_session || return 1
	local out
	out=$(api -X POST "http://cordon/v1/sessions/$SID/exec" \
		-d '{"argv":["sh","-c","i=0; while :; do i=$((i+1)); echo $i >n.tmp; mv n.tmp n; done"],"background":true}')
	expect_match "$out" '"state":"running"' "the counting exec: $out"
	local eid
	eid=$(printf '%s' "$out" | jq -r .exec)
	snapshot_or_skip || return
	local d n
	d=$(snapdir "$PID_")
	n=$(cat "$d/n" 2>/dev/null || echo 0)
	[[ "$n" =~ ^[0-9]+$ ]] || fail "the counter in the snapshot: $n"
	local i c=0
	for i in $(seq 1 400); do
		c=$(api "http://cordon/v1/sessions/$SID/files?path=n" 2>/dev/null)
		[[ "$c" =~ ^[0-9]+$ ]] && [ "$c" -gt "$n" ] && break
		sleep 0.05
	done
	[ "$c" -gt "$n" ] 2>/dev/null || fail "the exec did not go on after the snapshot ($c, snapshot $n)"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -r .state)" running "the exec still runs"
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/pause")
	if [[ "$out" != *" 200" ]]; then
		t_skip "no freezer for the session: $out"
		return
	fi
	snapshot_or_skip || return
	expect_eq "$(api "http://cordon/v1/sessions/$SID" | jq -r .state)" paused "paused after a snapshot of a paused session"
	api -X DELETE "http://cordon/v1/sessions/$SID" >/dev/null
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# The budget (limits.snapshots): past it 429 naming it; a DELETE makes room.
test_snapshot_budget() {
	start_server || return 1
	new_session '{"policy":{"limits":{"snapshots":"96K"}}}' || return 1
	expect_eq "$(run_in 'head -c 40000 /dev/zero >big')" ok "40 KB written"
	snapshot_or_skip || return
	local p1=$PID_
	snapshot_or_skip || return
	local out
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots")
	expect_match "$out" 'past their budget of 98304 bytes \(limits.snapshots; 80000 used\).* 429$' "the third: $out"
	expect_eq "$(ls "$STATE/sessions/$SID/snapshots" | wc -l)" 2 "nothing left of the refused one"
	api -X DELETE "http://cordon/v1/sessions/$SID/snapshots/$p1" >/dev/null
	snapshot_or_skip || return
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots")" ' 429$' "full again"
	expect_match "$(api_code -X POST http://cordon/v1/sessions -d '{"policy":{"limits":{"snapshots":"lots"}}}')" 'limits.snapshots.* 4[0-9][0-9]$' "a bad size"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Hostile upper content: a link made by the run to a file outside is
# copied as a link (never read through: the target's bytes are not
# counted), a FIFO made anew (never opened: the copy does not block), and
# a change set past the bound of entries is refused (413), nothing left.
test_snapshot_hostile() {
	CORDON_SNAPSHOT_MAX_ENTRIES=50 start_server || return 1
	new_session || return 1
	expect_eq "$(run_in 'ln -s /etc/shadow s; ln -s / root; mkfifo p; mkdir -p l && cd l && ln -s ../../../.. up')" ok "links and a FIFO"
	snapshot_or_skip || return
	expect_eq "$(printf '%s' "$SNAP" | jq -c '[.files, .bytes]')" '[0,0]' "no bytes read through a link: $SNAP"
	expect_eq "$(readlink "$(snapdir "$PID_")/root")" / "the link to /, a link"
	expect_eq "$(run_in 'mkdir many && cd many && i=0; while [ $i -lt 60 ]; do : >f$i; i=$((i+1)); done')" ok "60 files"
	local out
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots")
	expect_match "$out" 'too large to snapshot: more than 50 entries.* 413$' "past the bound: $out"
	expect_eq "$(ls "$STATE/sessions/$SID/snapshots" | wc -l)" 1 "nothing left of the refused one"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A workspace without a change set (direct mode): 409; not a session: 404.
test_snapshot_routes() {
	start_server || return 1
	expect_match "$(api_code -X POST http://cordon/v1/sessions/s-0123456789abcdef/snapshots)" ' 404$' "no such session"
	new_session '{"policy":{"filesystem":{"workspace_mode":"direct"}}}' || return 1
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots")" 'workspace mode is direct.* 409$' "direct mode"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/snapshots")" '"snapshots": *\[\].* 200$' "an empty list"
	api -X DELETE "http://cordon/v1/sessions/$SID" >/dev/null
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots")" ' 410$' "an ended session"
	# another writable path: not in the snapshot, and the answer says so
	mkdir -p "$WS/rw"
	new_session "{\"policy\":{\"filesystem\":{\"write\":[\"$WS/rw\"]}}}" || return 1
	snapshot_or_skip || return
	expect_eq "$(printf '%s' "$SNAP" | jq -c .not_covered)" "[\"$WS/rw\"]" "not_covered: $SNAP"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# rd SID PATH: a file of a session's workspace, through the files API.
rd() { api "http://cordon/v1/sessions/$1/files?path=$2" 2>/dev/null; }
# fork_of SID [BODY]: a fork's id in $FID.
fork_of() {
	local out k
	# 503 "try again" (the session's processes did not freeze in time: a
	# loaded emulated guest) is retried, as a client would.
	for k in 1 2 3; do
		out=$(api_code -X POST "http://cordon/v1/sessions/$1/fork" -d "${2:-}")
		[[ "$out" == *"try again"*503 ]] || break
		echo "# fork: $out (try $k)"
	done
	if [[ "$out" == *"its workspace mode is direct"*409 ]]; then
		t_skip "no overlay workspace for a session on this host"
		return 1
	fi
	FID=$(printf '%s' "${out% 201}" | jq -r .id 2>/dev/null)
	[[ "$FID" =~ ^s-[0-9a-f]{16}$ ]] || { fail "fork: $out"; return 1; }
}

# Fork: at now and at a snapshot; each side's writes never seen by the
# other; a fork of a fork (whiteouts and a replaced directory applied); the
# parent deleted, its forks go on.
test_fork() {
	start_server || return 1
	new_session '{"idle_timeout":"5m"}' || return 1
	local a=$SID
	expect_eq "$(run_in 'echo one >a; mkdir -p d/e; echo x >d/e/f; ln d/e/f hl; echo keep >k')" ok "the parent's writes"
	snapshot_or_skip || return
	local p1=$PID_
	expect_eq "$(run_in 'echo two >a')" ok "a rewritten after the snapshot"
	fork_of "$a" || return
	local b=$FID
	expect_eq "$(rd "$b" a)" two "the fork at now sees a as it is"
	expect_eq "$(rd "$b" d/e/f)" x "and d/e/f"
	SID=$b
	expect_eq "$(run_in '[ "$(stat -c %i hl)" = "$(stat -c %i d/e/f)" ] && echo fork >a && echo new >b && rm k && rm -r d && mkdir d && echo y >d/g')" ok "the fork's writes (a hard link kept)"
	expect_eq "$(rd "$a" a)" two "the parent does not see the fork's write"
	expect_eq "$(api_code "http://cordon/v1/sessions/$a/files?path=b")" "$(api_code "http://cordon/v1/sessions/$a/files?path=nothing-here" | sed 's/nothing-here/b/g')" "nor its new file"
	expect_eq "$(rd "$a" k)" keep "nor its deletion"
	SID=$a
	expect_eq "$(run_in 'echo three >a')" ok "the parent writes on"
	expect_eq "$(rd "$b" a)" fork "the fork does not see it"
	fork_of "$a" "{\"snapshot\":\"$p1\"}" || return
	local c=$FID
	expect_eq "$(rd "$c" a)" one "the fork at the snapshot sees a as it was then"
	fork_of "$b" || return
	local d=$FID
	SID=$d
	expect_eq "$(run_in 'cat a; cat b; ls d; [ -e k ] || echo no-k; [ -e d/e ] || echo no-e')" ok "a fork of the fork"
	expect_eq "$(api -X POST "http://cordon/v1/sessions/$d/exec" -d '{"argv":["sh","-c","cat a b; ls d; [ -e k ] || echo no-k"]}' |
		jq -r 'select(.type == "stdout") | .data_b64' | base64 -d | tr '\n' ' ')" "fork new g no-k " "its view: the fork's changes over the fork's start"
	api -X DELETE "http://cordon/v1/sessions/$a" >/dev/null
	expect_eq "$(rd "$b" a)" fork "the parent deleted, the fork reads"
	SID=$b
	expect_eq "$(run_in 'echo after >a')" ok "and writes"
	expect_eq "$(rd "$c" a)" one "the other fork too"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$b/fork" -d '{"snapshot":"p-0123456789abcdef"}')" 'no such snapshot.* 404$' "an unknown snapshot"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$b/fork" -d '{"snapshot":7}')" ' 400$' "a bad snapshot"
	expect_match "$(api_code "http://cordon/v1/sessions/$b/fork")" ' 405$' "GET fork"
	expect_eq "$(api "http://cordon/v1/sessions/$b/snapshots" | jq -c '.snapshots')" '[]' "the fork's snapshot at now is gone"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A fork while an exec runs in the parent: the exec is frozen for the
# copy, goes on after it, and the fork has what it had written.
test_fork_while_running() {
	start_server || return 1
	new_session || return 1
	local a=$SID out
	out=$(api -X POST "http://cordon/v1/sessions/$a/exec" \
		-d '{"argv":["sh","-c","i=0; while :; do i=$((i+1)); echo $i >n.tmp; mv n.tmp n; done"],"background":true}')
	local eid
	eid=$(printf '%s' "$out" | jq -r .exec)
	local i
	for i in $(seq 1 400); do
		[[ "$(rd "$a" n)" =~ ^[0-9]+$ ]] && break
		sleep 0.05
	done
	fork_of "$a" || return
	local n
	n=$(rd "$FID" n)
	[[ "$n" =~ ^[0-9]+$ ]] || fail "the counter in the fork: $n"
	sleep 0.3
	expect_eq "$(rd "$FID" n)" "$n" "the fork's counter stands (no exec of the parent's writes there)"
	expect_eq "$(api "http://cordon/v1/sessions/$a/exec/$eid" | jq -r .state)" running "the parent's exec still runs"
	for i in $(seq 1 400); do
		[ "$(rd "$a" n)" -gt "$n" ] 2>/dev/null && break
		sleep 0.05
	done
	[ "$(rd "$a" n)" -gt "$n" ] 2>/dev/null || fail "the parent's exec did not go on"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# restore_to SID SNAP: POST .../restore; its answer and code in $OUT.
restore_to() { OUT=$(api_code -X POST "http://cordon/v1/sessions/$1/restore" -d "{\"snapshot\":\"$2\"}"); }
# view: what the session's workspace holds, as its exec sees it.
view() {
	api -X POST "http://cordon/v1/sessions/$SID/exec" \
		-d '{"argv":["sh","-c","for f in $(find . -mindepth 1 | sort); do if [ -f $f ]; then echo \"$f=$(cat $f)\"; else echo $f; fi; done | tr \"\\n\" \" \""]}' |
		jq -r 'select(.type == "stdout") | .data_b64' | base64 -d
}

# Restore under a running exec: the exec ends, its result says "restored";
# the workspace is the snapshot's (a file rewritten, a directory removed, a
# file made since: each back as it was; a hard link a link); the session
# goes on (execs, writes, another restore). A fork's restore: its starting
# tree under the snapshot (a deletion of a file of that tree kept).
test_restore() {
	start_server || return 1
	new_session || return 1
	expect_eq "$(run_in 'echo one >a; mkdir -p d; echo x >d/f; ln d/f hl')" ok "the writes"
	snapshot_or_skip || return
	local p1=$PID_ before
	before=$(view)
	expect_eq "$before" "./a=one ./d ./d/f=x ./hl=x " "the view at the snapshot"
	expect_eq "$(run_in 'echo two >a; rm -r d; echo new >b')" ok "changes after it"
	local out eid
	out=$(api -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["sh","-c","while :; do echo loop >>log; sleep 0.1; done"],"background":true}')
	eid=$(printf '%s' "$out" | jq -r .exec)
	restore_to "$SID" "$p1"
	expect_match "$OUT" "\"restored\":\"$p1\".* 200$" "the restore"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -c '[.status, .signal]')" '["restored","SIGKILL"]' "the running exec: ended, and says so"
	expect_eq "$(view)" "$before" "the view after the restore"
	expect_eq "$(run_in '[ "$(stat -c %i hl)" = "$(stat -c %i d/f)" ] && echo three >a')" ok "a hard link again, and a write"
	expect_eq "$(rd "$SID" a)" three "the write"
	restore_to "$SID" "$p1"
	expect_match "$OUT" ' 200$' "restored again: $OUT"
	expect_eq "$(rd "$SID" a)" one "a as it was"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/restore" -d '{"snapshot":"p-0123456789abcdef"}')" 'no such snapshot.* 404$' "an unknown snapshot"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/restore" -d '{}')" ' 400$' "no snapshot"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/restore")" ' 405$' "GET restore"
	# a fork: its start (the parent's view) is its lower tree
	fork_of "$SID" || return
	local parent=$SID
	SID=$FID
	expect_eq "$(run_in 'echo f >a; rm hl')" ok "the fork's changes"
	snapshot_or_skip || return
	local q=$PID_ at
	at=$(view)
	expect_eq "$(run_in 'echo g >a; echo h >hl; rm -r d')" ok "more"
	restore_to "$SID" "$q"
	expect_match "$OUT" ' 200$' "the fork's restore: $OUT"
	expect_eq "$(view)" "$at" "the fork's view at its snapshot (hl deleted, d back)"
	expect_eq "$(rd "$parent" a)" one "the parent untouched"
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/pause")
	if [[ "$out" == *" 200" ]]; then
		restore_to "$SID" "$q"
		expect_match "$OUT" 'the session is paused.* 409$' "a paused session"
		api -X POST "http://cordon/v1/sessions/$SID/resume" >/dev/null
	fi
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A restore right as an exec starts: the exec ends "restored", and the
# session lives on (a kill of the exec's cgroup while the agent is in it,
# starting the exec, would end the agent, and the session with it).
test_restore_as_an_exec_starts() {
	start_server || return 1
	new_session || return 1
	expect_eq "$(run_in 'echo one >a')" ok "a write"
	snapshot_or_skip || return
	local i eid out
	for i in $(seq 1 15); do
		# one connection, the restore sent as soon as the exec's answer came
		out=$(api -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["sleep","100"],"background":true}' \
			--next --unix-socket "$SOCK" -w ' %{http_code}' -X POST "http://cordon/v1/sessions/$SID/restore" \
			-d "{\"snapshot\":\"$PID_\"}")
		eid=$(printf '%s' "$out" | head -1 | jq -r .exec 2>/dev/null)
		expect_match "$(printf '%s' "$out" | tr -d '\n')" "\"restored\":\"$PID_\".* 200$" "restore $i: $out" || break
		out=$(api "http://cordon/v1/sessions/$SID/exec/$eid" | jq -r .status)
		expect_eq "$out" restored "the exec of round $i" || break
	done
	expect_eq "$(run_in 'cat a')" ok "the session lives on"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Empty files weigh nothing in the byte budget: the entries of all of a
# session's snapshots are bounded too (the bound of one), else 64
# snapshots of 200,000 empty files each (12.8 million inodes a session)
# fill the state directory's filesystem within the 1G budget.
test_snapshot_entries_bounded_across_snapshots() {
	CORDON_SNAPSHOT_MAX_ENTRIES=50 start_server || return 1
	new_session || return 1
	expect_eq "$(run_in 'i=0; while [ $i -lt 30 ]; do : >f$i; i=$((i+1)); done')" ok "30 empty files"
	snapshot_or_skip || return
	local out
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots")
	expect_match "$out" 'entries.*DELETE one first.* 429$' "a second copy of 30 entries, past 50 in all: $out"
	expect_eq "$(ls "$STATE/sessions/$SID/snapshots" | wc -l)" 1 "nothing left of the refused one"
	expect_match "$(api_code -X DELETE "http://cordon/v1/sessions/$SID/snapshots/$PID_")" ' 200$' "the first deleted"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots")" ' 201$' "room again"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A deep tree within the bounds (256 levels) is copied with few
# descriptors a level: three a level took 360 for 120 levels, past a
# limit of 300 (the server's own, shared by every connection, when it
# seeds a fork), and the copy failed with EMFILE.
test_snapshot_deep_tree_few_descriptors() {
	command -v prlimit >/dev/null || { t_skip "no prlimit"; return; }
	start_server || return 1
	prlimit --pid "$SRV" --nofile=300:300 || { t_skip "prlimit refused"; return; }
	new_session || return 1
	expect_eq "$(run_in 'i=0; while [ $i -lt 120 ]; do mkdir a && cd a; i=$((i+1)); done; echo x >f')" ok "120 levels"
	snapshot_or_skip || return
	fork_of "$SID" || return
	expect_eq "$(rd "$FID" "$(printf 'a/%.0s' $(seq 120))f")" x "the deepest file, forked"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# tree_view: the session's whole tree as its exec sees it, one line an
# entry: path, type, mode, and a file's hash or a link's target.
tree_view() {
	api -X POST "http://cordon/v1/sessions/$SID/exec" \
		-d '{"argv":["sh","-c","find . -mindepth 1 | LC_ALL=C sort | while read -r f; do if [ -L \"$f\" ]; then echo \"$f L $(readlink \"$f\")\"; elif [ -f \"$f\" ]; then echo \"$f F $(stat -c %a \"$f\") $(md5sum <\"$f\" | cut -c1-12)\"; else echo \"$f $(stat -c \"%F %a\" \"$f\")\"; fi; done"]}' |
		jq -r 'select(.type == "stdout") | .data_b64' | base64 -d
}
# restore_rounds: in $SID (its tree made by the caller), changes that add,
# change and delete files and directories, replace a directory by a file
# and a file by a directory, and make directories anew (rm -rf; mkdir:
# opaque); restores back and forth between a snapshot before them and one
# after; the view after each equals the snapshot's view.
restore_rounds() {
	snapshot_or_skip || return 1
	local s1=$PID_ v1 v2
	v1=$(tree_view)
	[ -n "$v1" ] || { fail "no view"; return 1; }
	expect_eq "$(run_in 'echo 2 >a; rm b; echo z >z; mkdir -p nd/q; echo r >nd/q/r; rm -r e; rm -r g; echo g >g; rm f; mkdir f; echo i >f/i; rm -rf o; mkdir o; echo 3 >o/3; echo k2 >n/m/k; chmod 600 d/x; ln -s a sl; rm -r big/sub; mkdir big/sub')" ok "the changes"
	snapshot_or_skip || return 1
	local s2=$PID_
	v2=$(tree_view)
	restore_to "$SID" "$s1"
	expect_match "$OUT" ' 200$' "restore to the first: $OUT"
	expect_eq "$(tree_view)" "$v1" "the view of the first snapshot"
	expect_eq "$(run_in 'rm -rf d n; mkdir -p e2/x; echo w >a; rm -rf o; mkdir o')" ok "other changes"
	restore_to "$SID" "$s2"
	expect_match "$OUT" ' 200$' "restore to the second: $OUT"
	expect_eq "$(tree_view)" "$v2" "the view of the second snapshot (its whiteouts, replaced and opaque directories)"
	restore_to "$SID" "$s1"
	expect_match "$OUT" ' 200$' "restore to the first again: $OUT"
	expect_eq "$(tree_view)" "$v1" "the view of the first snapshot again"
}

# A restore rewrites only what either layer (the run's now, the
# snapshot's) holds: in a session (its tree in its upper layer) and in a
# fork of a fork (its tree in its lower one), the view after each restore
# is the snapshot's, and a file neither layer holds is left as it is (the
# same inode: not written again through the overlay).
test_restore_only_changes() {
	start_server || return 1
	new_session '{"idle_timeout":"5m"}' || return 1
	local mk='echo 1 >a; echo b >b; mkdir -p d e g o n/m big/sub; echo x >d/x; echo y >d/y; echo p >e/p; echo h >g/h; echo f >f; echo 1 >o/1; echo 2 >o/2; echo k >n/m/k; i=0; while [ $i -lt 40 ]; do echo $i >big/f$i; echo $i >big/sub/s$i; i=$((i+1)); done'
	expect_eq "$(run_in "$mk")" ok "the tree"
	restore_rounds || return
	fork_of "$SID" || return
	fork_of "$FID" || return
	SID=$FID
	local ino
	ino=$(api -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["stat","-c","%i","big/f7"]}' | jq -r 'select(.type == "stdout") | .data_b64' | base64 -d)
	[[ "$ino" =~ ^[0-9]+$ ]] || fail "the inode of big/f7: $ino"
	restore_rounds || return
	expect_eq "$(api -X POST "http://cordon/v1/sessions/$SID/exec" -d '{"argv":["stat","-c","%i","big/f7"]}' | jq -r 'select(.type == "stdout") | .data_b64' | base64 -d)" "$ino" "big/f7 (in neither layer) left as it is"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# GET .../snapshots/{pid}/changes: a snapshot's change set against the
# session's lower tree (a fork's: its start), in the shape of GET
# .../changes; what came after the snapshot is not in it.
test_snapshot_changes() {
	start_server || return 1
	new_session || return 1
	expect_eq "$(run_in 'echo one >a; mkdir d; echo x >d/f; echo k >k')" ok "the parent's tree"
	fork_of "$SID" || return
	SID=$FID
	expect_eq "$(run_in 'echo two >a; rm k; echo new >n')" ok "the fork's changes"
	snapshot_or_skip || return
	local p1=$PID_ out
	expect_eq "$(run_in 'echo three >a; echo later >l')" ok "changes after the snapshot"
	out=$(api_code "http://cordon/v1/sessions/$SID/snapshots/$p1/changes")
	expect_match "$out" ' 200$' "GET the snapshot's changes: $out"
	out=${out% 200}
	expect_eq "$(printf '%s' "$out" | jq -c '[.changes[] | "\(.change) \(.path) \(.type)"]')" \
		'["modified a file","deleted k other","created n file"]' "the snapshot's change set"
	expect_eq "$(printf '%s' "$out" | jq -r '[.session, .snapshot, .diff_truncated] | join(" ")')" "$SID $p1 false" "its session and snapshot"
	expect_match "$(printf '%s' "$out" | jq -r .diff)" '^\+two$' "the diff: a as the snapshot has it"
	expect_nomatch "$(printf '%s' "$out" | jq -r .diff)" 'three|later' "nothing of what came after"
	local now
	now=$(api "http://cordon/v1/sessions/$SID/changes")
	expect_eq "$(printf '%s' "$now" | jq -c '[.changes[].path]')" '["a","k","l","n"]' "the session's changes now"
	expect_eq "$(printf '%s' "$out" | jq -c 'del(.snapshot) | keys')" "$(printf '%s' "$now" | jq -c keys)" "the same shape as GET .../changes"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/snapshots/p-0123456789abcdef/changes")" 'no such snapshot.* 404$' "an unknown snapshot"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots/$p1/changes")" ' 405$' "POST"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A fork's starting copy and a restore's staging are bounded in bytes by
# the session's limits.snapshots: past it 507, the error says so, nothing
# is left (no session directory, no staging), the workspace as it was. A
# server as root stacks a fork over its parent's layers: its copy is its
# snapshot alone (60 KB here), within the budget as every snapshot is.
test_fork_restore_byte_bound() {
	start_server || return 1
	new_session '{"policy":{"limits":{"snapshots":"96K"}}}' || return 1
	expect_eq "$(run_in 'head -c 60000 /dev/zero >big')" ok "60 KB"
	fork_of "$SID" || return
	local b=$FID out n
	SID=$b
	expect_eq "$(run_in 'head -c 60000 /dev/zero >big2')" ok "60 KB more in the fork"
	n=$(ls "$STATE/sessions" | wc -l)
	out=$(api_code -X POST "http://cordon/v1/sessions/$b/fork")
	if [ "$(id -u)" = 0 ]; then
		expect_match "$out" ' 201$' "a stacked fork of 120 KB copies its snapshot's 60: $out"
		api -X DELETE "http://cordon/v1/sessions/$(printf '%s' "${out% 201}" | jq -r .id)" >/dev/null
		n=$((n + 1))
	else
		expect_match "$out" 'more than 98304 bytes \(its policy.s limits.snapshots.* 507$' "a fork of 120 KB: $out"
	fi
	expect_eq "$(ls "$STATE/sessions" | wc -l)" "$n" "no session directory left of it"
	expect_eq "$(api "http://cordon/v1/sessions/$b/snapshots" | jq -c '.snapshots')" '[]' "nor its snapshot"
	snapshot_or_skip || return
	local p1=$PID_
	expect_eq "$(run_in 'rm big')" ok "the lower tree's file deleted"
	restore_to "$b" "$p1"
	expect_match "$OUT" 'more than 98304 bytes \(limits.snapshots.*the workspace is as it was.* 507$' "a restore rewriting 120 KB: $OUT"
	expect_eq "$(ls "$STATE/sessions/$b/snapshots")" "$p1" "no staging left"
	expect_eq "$(run_in '[ ! -e big ] && [ -s big2 ]')" ok "the workspace as it was"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# POST .../snapshots/{pid}/changeset: a review-mode session's change set
# taken from an older snapshot, sealed, kept beside the session's own:
# `cordon apply` of it brings exactly that snapshot's changes to the host
# (not what came after it), and only then; the host is untouched before.
test_snapshot_changeset() {
	start_server || return 1
	local p=$WS/proj out dir
	mkdir -p "$p/src"
	printf 'hello\n' >"$p/README"
	printf 'one\n' >"$p/src/a.txt"
	printf 'keep\n' >"$p/k"
	new_session "$(jq -cn --arg p "$p" '{policy: {cwd: $p, filesystem: {write: [$p], workspace_mode: "review"}}}')" || return 1
	expect_eq "$(run_in 'echo changed >>README; rm src/a.txt; mkdir -p n; echo new >n/f')" ok "the changes"
	snapshot_or_skip || return
	local p1=$PID_
	expect_eq "$(run_in 'echo later >>README; echo l >l; rm k; rm -r n')" ok "changes after the snapshot"
	snapshot_or_skip || return
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots/$p1/changeset")
	expect_match "$out" ' 201$' "the change set of the older snapshot: $out"
	out=${out% 201}
	dir=$(printf '%s' "$out" | jq -r .dir)
	expect_eq "$(printf '%s' "$out" | jq -c --arg p "$p" '[.snapshot, .hosts == [$p], .files]')" "[\"$p1\",true,2]" "its answer: $out"
	expect_eq "$(cat "$p/README"; [ -e "$p/src/a.txt" ] && echo a-here)" "$(printf 'hello\na-here')" "the host untouched until it is applied"
	expect_eq "$(api "http://cordon/v1/sessions/$SID/changes" | jq -c '[.changes[].path]')" '["README","k","l","src/a.txt"]' "the session's own change set goes on"
	expect_match "$(api_code "http://cordon/v1/sessions/$SID/snapshots/$p1/changeset")" ' 405$' "GET"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots/p-0123456789abcdef/changeset")" 'no such snapshot.* 404$' "an unknown snapshot"
	end_session "$SID"
	"$CORDON" apply "$dir" -q || fail "cordon apply $dir"
	expect_eq "$(cat "$p/README")" "$(printf 'hello\nchanged')" "README as the snapshot had it"
	[ ! -e "$p/src/a.txt" ] || fail "the snapshot's deletion applied"
	expect_eq "$(cat "$p/n/f" 2>&1)" new "its new file"
	expect_eq "$(cat "$p/k" 2>&1)" keep "a deletion after the snapshot is not applied"
	[ ! -e "$p/l" ] || fail "a file made after the snapshot is applied"
	[ ! -e "$dir" ] || fail "the applied change set is left"
	stop_server
	t_assert
}

# Outside review attack14: the change sets made from a session's snapshots
# were bounded by their file bytes alone. Empty files, directories and
# links weigh nothing there, so one snapshot of many empty files could be
# made into change sets without end, each as many inodes of the
# workspace's filesystem (and a set's own files), where the snapshots
# themselves are bounded in entries too. Their entries are bounded in all
# as the snapshots' are.
test_snapshot_changesets_entries_bounded() {
	CORDON_SNAPSHOT_MAX_ENTRIES=50 start_server || return 1
	local p=$WS/proj out dir
	mkdir -p "$p"
	new_session "$(jq -cn --arg p "$p" '{policy: {cwd: $p, filesystem: {write: [$p], workspace_mode: "review"}}}')" || return 1
	expect_eq "$(run_in 'i=0; while [ $i -lt 30 ]; do : >f$i; i=$((i+1)); done')" ok "30 empty files"
	snapshot_or_skip || return
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots/$PID_/changeset")
	expect_match "$out" ' 201$' "the first change set of 30 entries: $out"
	dir=$(printf '%s' "${out% 201}" | jq -r .dir)
	local n
	n=$(ls "${dir%/*}" | wc -l)
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots/$PID_/changeset")
	expect_match "$out" 'entries.* 429$' "a second one, past 50 entries in all: $out"
	expect_eq "$(ls "${dir%/*}" | wc -l)" "$n" "nothing left of the refused one"
	end_session "$SID"
	stop_server
	t_assert
}

# A restore of a fork whose lower tree is deep (120 levels) rewrites its
# deepest file with few descriptors: the patch's walk held five a level
# (600, past a worker's limit of 300) and the restore failed with EMFILE;
# it holds those of the level it is at.
test_restore_deep_tree_few_descriptors() {
	command -v prlimit >/dev/null || { t_skip "no prlimit"; return; }
	start_server || return 1
	prlimit --pid "$SRV" --nofile=300:300 || { t_skip "prlimit refused"; return; }
	new_session || return 1
	local deep
	deep="$(printf 'a/%.0s' $(seq 120))f"
	expect_eq "$(run_in 'i=0; while [ $i -lt 120 ]; do mkdir a && cd a; i=$((i+1)); done; echo x >f')" ok "120 levels"
	fork_of "$SID" || return
	SID=$FID
	expect_eq "$(run_in "echo y >$deep")" ok "the deepest file changed in the fork"
	snapshot_or_skip || return
	local p1=$PID_
	expect_eq "$(run_in "echo z >$deep; echo w >${deep%f}g")" ok "changed again"
	restore_to "$SID" "$p1"
	expect_match "$OUT" ' 200$' "the restore: $OUT"
	expect_eq "$(rd "$SID" "$deep")" y "the deepest file as the snapshot had it"
	expect_eq "$(run_in "[ ! -e ${deep%f}g ]")" ok "the file made after it gone"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# out_of CMD: stdout of an exec of sh -c CMD in $SID, lines joined by spaces.
out_of() {
	api -X POST "http://cordon/v1/sessions/$SID/exec" -d "$(jq -nc --arg c "$1" '{argv:["sh","-c",$c]}')" |
		jq -r 'select(.type == "stdout") | .data_b64' | base64 -d | tr '\n' ' '
}
# stacked_or_skip: forks stack layers only on a server run as root.
stacked_or_skip() {
	[ "$(id -u)" = 0 ] && return 0
	t_skip "forks stack their parents' layers only on a server run as root"
}
# stacked_fork BODY PARENT_CMD FORK_CMD: a server of the test's own, a
# session made by BODY (its id in $A) with PARENT_CMD run in it, and its
# fork ($FID, and $SID) with FORK_CMD run; the test's status (skipped, or
# failed) where a step does not hold.
stacked_fork() {
	stacked_or_skip || return
	start_server || return 1
	new_session "$1" || return 1
	A=$SID
	expect_eq "$(run_in "$2")" ok "the parent's files"
	fork_of "$A" || return
	SID=$FID
	expect_eq "$(run_in "$3")" ok "the fork's changes"
}
# layers_sum: every shared layer's entries (names, modes, sizes, times,
# links) and their user.* attributes, hashed.
layers_sum() {
	{
		find "$STATE/layers" -printf '%P %y %m %s %T@ %n %U\n' | sort
		[ -x /usr/bin/python3 ] && /usr/bin/python3 -c '
import os, sys
for d, ds, fs in sorted(os.walk(sys.argv[1])):
    for n in sorted(ds + fs) + ["."]:
        p = os.path.join(d, n)
        try:
            print(p, sorted((a, os.getxattr(p, a, follow_symlinks=False)) for a in os.listxattr(p, follow_symlinks=False) if a.startswith("user.")))
        except OSError as e:
            print(p, e.errno)
' "$STATE/layers"
	} | md5sum
}

# Forks stack their parents' layers (docs/api.md, "Fork"): a fork of a
# fork of a fork sees every level (files, deletions, a replaced directory);
# each fork's workspace directory starts empty, its list names its
# snapshot's layer over its parent's; its writes (a hard link to a layer's
# file, chmod, touch, an opaque mark among them) stay in its own upper
# layer, never in a shared layer, its parent or a sibling; a deleted
# parent leaves its forks working; a fork's end makes its workspace
# directory whole; layers go once no session lists them.
test_fork_stack() {
	stacked_or_skip || return
	start_server || return 1
	new_session || return 1
	local a=$SID b c d e
	expect_eq "$(run_in 'mkdir -p d/e r; echo one >a; echo x >d/e/f; echo k >k; echo r >r/r; for i in $(seq 50); do echo $i >d/n$i; done')" ok "level 0"
	fork_of "$a" || return
	b=$FID
	expect_eq "$(cat "$STATE/sessions/$b/layers" | wc -l)" 1 "the fork lists one layer"
	expect_eq "$(ls -A "$STATE/sessions/$b/work")" "" "its workspace directory starts empty"
	SID=$b
	expect_eq "$(run_in 'echo two >a; rm k; rm -r r; mkdir r; echo s >r/s; echo b >b')" ok "level 1"
	fork_of "$b" || return
	c=$FID
	SID=$c
	expect_eq "$(run_in 'echo c >c; rm d/n7')" ok "level 2"
	fork_of "$c" || return
	d=$FID
	expect_eq "$(cat "$STATE/sessions/$d/layers" | wc -l)" 3 "a fork at level 3 lists three layers"
	expect_eq "$(tail -n 2 "$STATE/sessions/$d/layers" | tr '\n' ' ')" "$(cat "$STATE/sessions/$c/layers" | tr '\n' ' ')" "over its parent's stack"
	SID=$d
	local wpid n0 s0 i
	wpid=$(pgrep -n -P "$SRV")
	expect_eq "$(out_of 'cat a b c d/e/f r/s; [ -e k ] || echo no-k; [ -e r/r ] || echo no-r; [ -e d/n7 ] || echo no-n7; ls d | wc -l')" "two b c x s no-k no-r no-n7 50 " "every level seen"
	# its merged lower tree, opened for each call: no descriptor kept
	n0=$(ls "/proc/$wpid/fd" | wc -l)
	s0=$(ls "/proc/$SRV/fd" | wc -l)
	for i in 1 2 3; do
		expect_eq "$(api "http://cordon/v1/sessions/$d/changes" | jq -c '[.changes[] | "\(.change) \(.path)"]')" '[]' "no change of its own yet ($i)"
	done
	expect_eq "$(ls "/proc/$wpid/fd" | wc -l) $(ls "/proc/$SRV/fd" | wc -l)" "$n0 $s0" "no descriptor left in the worker nor the server"
	local sum
	sum=$(layers_sum)
	expect_eq "$(run_in 'ln d/e/f hl && chmod 600 d/e/f && touch -d 2001-01-01 a d && echo more >>c && mkdir -p q && rm d/n8')" ok "the fork writes over the layers' files"
	if [ -x /usr/bin/python3 ]; then
		expect_eq "$(run_in '/usr/bin/python3 -c "
import os
for p, a in ((\"d\", \"user.overlay.opaque\"), (\"d/e\", \"user.x\"), (\"r\", \"user.overlay.opaque\")):
    try:
        os.setxattr(p, a, b\"y\")
    except OSError:
        pass
"')" ok "marks set (or refused)"
	fi
	expect_eq "$(layers_sum)" "$sum" "the shared layers unchanged"
	fork_of "$c" || return
	e=$FID
	SID=$e
	expect_eq "$(out_of 'cat c; [ -e hl ] || echo no-hl; [ -e d/n8 ] && echo n8; stat -c %a d/e/f')" "c no-hl n8 644 " "a sibling sees none of it"
	SID=$c
	expect_eq "$(out_of 'cat c; [ -e q ] || echo no-q')" "c no-q " "nor its parent"
	api -X DELETE "http://cordon/v1/sessions/$a" >/dev/null
	api -X DELETE "http://cordon/v1/sessions/$b" >/dev/null
	SID=$d
	expect_eq "$(out_of 'cat a d/e/f; ls d | wc -l')" "two x 49 " "its ancestors deleted, the fork reads"
	expect_eq "$(run_in 'echo later >a')" ok "and writes"
	api -X DELETE "http://cordon/v1/sessions/$d" >/dev/null
	local w=$STATE/sessions/$d/work
	expect_eq "$(cat "$w/a" "$w/b" "$w/c" "$w/d/e/f" "$w/r/s" | tr '\n' ' ')" "later b c more x s " "its end: the workspace directory whole"
	expect_eq "$( [ -e "$w/k" ] || echo no-k; [ -e "$w/r/r" ] || echo no-r; [ -e "$w/d/n7" ] || echo no-n7; [ -e "$w/d/n8" ] || echo no-n8; ls "$w/d" | wc -l; stat -c %i "$w/hl")" "no-k
no-r
no-n7
no-n8
49
$(stat -c %i "$w/d/e/f")" "its deletions and its hard link"
	[ ! -e "$STATE/sessions/$d/layers" ] || fail "its list is dropped at its end"
	# (its own swept once its worker is reaped, after the answer)
	local k
	for k in $(seq 100); do [ "$(ls "$STATE/layers" | wc -l)" = 3 ] && break; sleep 0.05; done
	expect_eq "$(ls "$STATE/layers" | wc -l)" 3 "the layers c and e list are kept"
	api -X DELETE "http://cordon/v1/sessions/$c" >/dev/null
	api -X DELETE "http://cordon/v1/sessions/$e" >/dev/null
	# (swept once their workers are reaped)
	for k in $(seq 100); do [ -z "$(ls "$STATE/layers")" ] && break; sleep 0.05; done
	expect_eq "$(ls "$STATE/layers" | wc -l)" 0 "no session lists a layer: none left"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Pitfall: a fork deeper than 63 layers (fsconfig's string is 255 bytes)
# is refused with 409, not a 500. The lower layers named by one string
# (CORDON_TEST_LOWERDIR_ONE, as before Linux 6.8): a chain of 12 forks
# sees every level. The deepest stack is refused from a session whose
# list names 63 layers.
test_fork_stack_depth() {
	stacked_or_skip || return
	CORDON_TEST_LOWERDIR_ONE=1 start_server || return 1
	new_session || return 1
	expect_eq "$(run_in 'echo 0 >l0')" ok "level 0"
	local i prev
	for i in $(seq 1 12); do
		prev=$SID
		fork_of "$SID" || return
		api -X DELETE "http://cordon/v1/sessions/$prev" >/dev/null
		SID=$FID
		expect_eq "$(run_in "echo $i >l$i")" ok "level $i"
	done
	expect_eq "$(out_of 'cat l0 l6 l12; ls | wc -l')" "0 6 12 13 " "a fork at level 12 sees every level"
	for i in $(seq 1 63); do printf 'l-%016x\n' "$i"; done >"$STATE/sessions/$SID/layers"
	local out
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/fork")
	expect_match "$out" 'a stack of 63 layers, the most a fork.s may have is 63.* 409$' "past 63 layers: $out"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Pitfall: a server restarted right after kill -9, while its sessions'
# workers still end (each making its workspace whole, writing its report),
# removed their directories (no report yet: "never started") and so a
# fork's list, then its layers. The workers hold their session's directory
# LOCK_EX; the new server waits for them before it judges the directories
# and sweeps the layers: the fork's workspace directory is whole, its
# report kept, and no layer is left.
test_fork_stack_server_killed() {
	stacked_fork '{}' 'mkdir t; for i in $(seq 300); do echo $i >t/f$i; done' 'echo b >b; rm t/f1' || return
	local a=$A b=$FID k
	kill -KILL "$SRV"
	wait "$SRV" 2>/dev/null
	start_server || return 1
	for k in $(seq 200); do [ -e "$STATE/sessions/$b/report.json" ] && [ -z "$(ls "$STATE/layers")" ] && break; sleep 0.05; done
	expect_eq "$(cat "$STATE/sessions/$b/work/b" 2>&1; ls "$STATE/sessions/$b/work/t" 2>&1 | wc -l)" "b
299" "the fork's workspace directory whole"
	[ -s "$STATE/sessions/$b/report.json" ] || fail "its report kept"
	expect_eq "$(ls "$STATE/layers" | wc -l)" 0 "its layer swept once its list went"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Outside review attack18: a restart whose wait for a previous server's
# worker runs out (--worker-timeout) left that session's directory to be
# judged with no report yet: taken for gone and removed under the worker
# (a fork's whole workspace, its list, then its layers). The directory
# of a worker still ending is left as it is. The worker here is stood for
# by a holder of its directory's lock, the report not written yet.
test_restart_leaves_a_still_ending_session() {
	start_server || return 1
	new_session || return 1
	local a=$SID holder k
	expect_eq "$(run_in 'echo kept >k')" ok "a write"
	kill -KILL "$SRV"
	wait "$SRV" 2>/dev/null
	for k in $(seq 400); do [ -s "$STATE/sessions/$a/report.json" ] && flock -n "$STATE/sessions/$a" true && break; sleep 0.05; done
	rm -f "$STATE/sessions/$a/report.json"
	flock "$STATE/sessions/$a" sleep 30 &
	holder=$!
	for k in $(seq 100); do flock -n "$STATE/sessions/$a" true || break; sleep 0.05; done
	rm -f "$SOCK" # (the killed server's: the new one's comes after its start's judgement)
	start_server --worker-timeout 1s || return 1
	for k in $(seq 40); do [ -e "$STATE/sessions/$a/work/k" ] || break; sleep 0.05; done
	[ -d "$STATE/sessions/$a" ] || fail "the still-ending session's directory removed at the start"
	expect_eq "$(cat "$STATE/sessions/$a/work/k" 2>&1)" kept "its workspace as it was"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Pitfall: an end that cannot make the fork's workspace directory whole
# (here a read-only bind of it; a full disk alike) keeps its list, and so
# its layers, while the session is kept (a sweep after it leaves them),
# and its change set (not applied over a directory that is not whole),
# the report saying why.
test_fork_stack_end_not_whole() {
	stacked_fork '{}' 'echo one >a; mkdir d; echo x >d/x' 'echo two >a' || return
	local a=$A b=$FID w out
	# A change set made from its snapshot, which the end cannot seal: it
	# says so after the end (attack20: it said "sealed when that session
	# ends" for good).
	local dir=""
	out=$(api_code -X POST "http://cordon/v1/sessions/$b/snapshots")
	local p
	p=$(printf '%s' "${out% 201}" | jq -r .snapshot 2>/dev/null)
	out=$(api_code -X POST "http://cordon/v1/sessions/$b/snapshots/$p/changeset")
	expect_match "$out" ' 201$' "a change set from its snapshot: $out"
	dir=$(printf '%s' "${out% 201}" | jq -r .dir 2>/dev/null)
	w=$STATE/sessions/$b/work
	mount --bind "$w" "$w" && mount -o remount,bind,ro "$w" || { fail "a read-only bind of $w"; return 1; }
	out=$(api -X DELETE "http://cordon/v1/sessions/$b")
	umount "$w"
	local ao
	ao=$("$CORDON" apply "$dir" 2>&1) && fail "applied: $ao"
	expect_match "$ao" "could not be made whole at its end: never sealed" "the snapshot's change set: $ao"
	expect_eq "$(printf '%s' "$out" | jq -r .changes.state)" kept "its change set kept: $(printf '%s' "$out" | jq -c .changes)"
	expect_match "$(printf '%s' "$out" | jq -r .changes.reason)" 'could not be made whole from its stack of layers' "the reason"
	expect_eq "$(wc -l <"$STATE/sessions/$b/layers")" 1 "its list stays"
	[ ! -e "$STATE/sessions/$b/.work-stack" ] || fail "no copy left on its way"
	api -X DELETE "http://cordon/v1/sessions/$a" >/dev/null
	sleep 0.3 # (its worker reaped: a sweep)
	expect_eq "$(ls "$STATE/layers" | wc -l)" 1 "its layer stays"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Outside review attack18: an end cut short while it moves the stack's
# tree into the workspace directory (here a name already there: a file
# put in by hand) left the entries moved so far in it, a part of the tree
# under a kept change set. They go back: the directory is as it was.
test_fork_stack_end_cut_short_moves_back() {
	stacked_fork '{}' 'for i in $(seq 40); do echo $i >e$i; done' 'echo two >new' || return
	local a=$A b=$FID w out
	w=$STATE/sessions/$b/work
	echo planted >"$w/e20"
	out=$(api -X DELETE "http://cordon/v1/sessions/$b")
	expect_eq "$(printf '%s' "$out" | jq -r .changes.state)" kept "its change set kept: $(printf '%s' "$out" | jq -c .changes)"
	expect_eq "$(ls "$w" | tr '\n' ' ')" "e20 " "the workspace directory as it was"
	expect_eq "$(wc -l <"$STATE/sessions/$b/layers")" 1 "its list stays"
	[ ! -e "$STATE/sessions/$b/.work-stack" ] || fail "no copy left on its way"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Pitfall: a parent ending while a fork copies one of its snapshots. The
# fork holds the parent's snapshots directory LOCK_SH for its copy, the
# end's removal of the snapshots LOCK_EX: the fork is whole (every file)
# or refused as the parent is gone (404, 410), never a 500 nor a copy
# missing files.
test_fork_while_parent_ends() {
	start_server || return 1
	local i a p out code n
	for i in 1 2 3 4; do
		new_session || return 1
		a=$SID
		expect_eq "$(run_in 'mkdir t; for i in $(seq 400); do echo $i >t/f$i; done')" ok "400 files ($i)"
		snapshot_or_skip || return
		p=$PID_
		api -X DELETE "http://cordon/v1/sessions/$a" >/dev/null &
		[ "$i" -gt 2 ] && sleep 0.0$i
		out=$(api_code -X POST "http://cordon/v1/sessions/$a/fork" -d "{\"snapshot\":\"$p\"}")
		wait $!
		code=${out##* }
		case $code in
		201)
			SID=$(printf '%s' "${out% 201}" | jq -r .id)
			n=$(out_of 'ls t | wc -l')
			expect_eq "$n" "400 " "the fork ($i) has every file"
			api -X DELETE "http://cordon/v1/sessions/$SID" >/dev/null ;;
		404|410) ;;
		*) fail "a fork as its parent ends ($i): $out" ;;
		esac
	done
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Outside review attack18: a fork's copy of one snapshot held the whole
# snapshots directory, so a DELETE of another snapshot froze the parent's
# worker (its execs, its timers) for the length of the copy. The copy
# holds its own snapshot's directory only. The copy is held here by a
# test hook until the test lets it go.
test_snapshot_delete_not_held_by_another_snapshots_fork() {
	CORDON_TEST_FORK_HOLD_FILE=$T_TMP/release start_server || return 1
	new_session || return 1
	local a=$SID p q fpid k out
	expect_eq "$(run_in 'echo one >a')" ok "a file"
	snapshot_or_skip || return
	p=$PID_
	snapshot_or_skip || return
	q=$PID_
	api -X POST "http://cordon/v1/sessions/$a/fork" -d "{\"snapshot\":\"$p\"}" >"$T_TMP/fork" &
	fpid=$!
	for k in $(seq 400); do
		flock -n -x "$STATE/sessions/$a/snapshots/$p" true && flock -n -x "$STATE/sessions/$a/snapshots" true || break
		sleep 0.05
	done
	out=$(api_code --max-time 20 -X DELETE "http://cordon/v1/sessions/$a/snapshots/$q")
	expect_match "$out" "\"deleted\": *\"$q\".* 200$" "the other snapshot deleted while the fork copies"
	kill -0 "$fpid" 2>/dev/null || fail "the fork still copying then"
	expect_eq "$(run_in 'cat a')" ok "the parent serves on"
	touch "$T_TMP/release"
	wait "$fpid"
	expect_match "$(jq -r .id "$T_TMP/fork")" '^s-' "the fork made: $(cat "$T_TMP/fork")"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# A review-mode fork's end: its workspace directory whole, as the fork
# started (its change set kept over it, not applied), so that a discard
# leaves the parent's view and an apply (--force: the stack's files were
# written at the end) brings the fork's changes.
test_fork_stack_review() {
	stacked_fork '{"policy":{"filesystem":{"workspace_mode":"review"}}}' 'echo one >a; echo k >k; mkdir d; echo x >d/x' 'echo two >a; rm k; rm -r d; mkdir d; echo y >d/y; echo n >n' || return
	local a=$A b=$FID w out dir
	out=$(api -X DELETE "http://cordon/v1/sessions/$b")
	expect_eq "$(printf '%s' "$out" | jq -r .changes.state)" kept "review: kept"
	dir=$(printf '%s' "$out" | jq -r .changes.dir)
	w=$STATE/sessions/$b/work
	expect_eq "$(cat "$w/a" "$w/k" "$w/d/x" | tr '\n' ' ')" "one k x " "the workspace directory: the fork's start, whole"
	# The set starts from after the stack's copy: the stack's files it
	# changes are no conflicts (before, they were: --force applied them).
	out=$("$CORDON" apply "$dir" 2>&1) || fail "apply $dir: $out"
	expect_eq "$(cat "$w/a" "$w/d/y" "$w/n" | tr '\n' ' '; [ -e "$w/k" ] || echo no-k; [ -e "$w/d/x" ] || echo no-x)" "two y n no-k
no-x" "applied: the fork's changes"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

# Outside review attack19: a fork starts from the session's own workspace
# directory, which a session whose workspace is a host tree (its cwd in a
# write path) or an image's does not hold: such a fork started from the
# wrong tree, and a stacked one's end wrote its parent's snapshot straight
# into the host tree (past review and protected names). Refused (409), as
# is a restore, which rewrote the wrong tree; a snapshot and its change set
# go on.
test_fork_of_a_host_tree_session_refused() {
	start_server || return 1
	local p=$WS/proj out
	mkdir -p "$p"
	printf 'orig\n' >"$p/k"
	new_session "$(jq -cn --arg p "$p" '{policy: {cwd: $p, filesystem: {write: [$p], workspace_mode: "review"}}}')" || return 1
	expect_eq "$(run_in 'echo changed >k; mkdir -p .git/hooks; echo x >.git/hooks/post-checkout; echo n >n')" ok "the changes"
	snapshot_or_skip || return
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/fork")
	expect_match "$out" "cannot be forked: the session's workspace is $p, not a directory of its own.* 409$" "a fork: $out"
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/fork" -d "{\"snapshot\":\"$PID_\"}")
	expect_match "$out" "cannot be forked.* 409$" "a fork at a snapshot: $out"
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/restore" -d "{\"snapshot\":\"$PID_\"}")
	expect_match "$out" "not a directory of its own.* 409$" "a restore: $out"
	expect_match "$(api_code -X POST "http://cordon/v1/sessions/$SID/snapshots/$PID_/changeset")" ' 201$' "the snapshot's change set"
	expect_eq "$(cat "$p/k"; ls -A "$p" | tr '\n' ' ')" "orig
k " "the host tree untouched"
	# Its name pointed at the session's own directory since (attack20): the
	# tree the run has is judged, not what the name leads to now.
	mv "$p" "$p.real"
	ln -s "$STATE/sessions/$SID/work" "$p"
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/fork")
	expect_match "$out" "cannot be forked.* 409$" "a fork, the name a link to its directory: $out"
	out=$(api_code -X POST "http://cordon/v1/sessions/$SID/restore" -d "{\"snapshot\":\"$PID_\"}")
	expect_match "$out" "not a directory of its own.* 409$" "a restore, the name a link to its directory: $out"
	rm "$p"
	mv "$p.real" "$p"
	expect_eq "$(ls "$STATE/sessions" | wc -l)" 1 "no fork's directory left"
	end_session "$SID"
	stop_server
	t_assert
}

# The same on a server not run as root (attack21): there the check judged
# what the workspace's name led to when asked, and a link swapped in for it
# (renameat2 RENAME_EXCHANGE in a loop) got a fork over the host tree. It
# judges the directory the run's plan pinned, which a host tree is not.
test_fork_of_a_host_tree_session_refused_by_a_server_not_root() {
	[ "$(id -u)" = 0 ] || { t_skip "needs root to become an ordinary user"; return; }
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null ||
		{ t_skip "unprivileged user namespaces are disabled"; return; }
	local d p out own host
	d=$(mktemp -d /var/tmp/cordon-nr.XXXXXX)
	p=$d/proj
	mkdir -p "$p" "$d/h"
	chown -R 65534:65534 "$d"
	chmod 755 "$d"
	nr() { setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$d/s.sock" --max-time 60 -w ' %{http_code}' "$@" | tr -d '\n'; }
	setpriv --reuid 65534 --regid 65534 --clear-groups env HOME="$d/h" "$CORDON" serve --socket "$d/s.sock" --state-dir "$d/state" 2>"$T_TMP/serve.log" &
	serve_started $!
	local i
	for i in $(seq 1 600); do [ -S "$d/s.sock" ] && break; sleep 0.05; done
	own=$(nr -X POST http://cordon/v1/sessions -d '{}')
	own=$(printf '%s' "${own% 201}" | jq -r .id 2>/dev/null)
	host=$(nr -X POST http://cordon/v1/sessions -d "$(jq -cn --arg p "$p" '{policy: {cwd: $p, filesystem: {write: [$p], workspace_mode: "review"}}}')")
	host=$(printf '%s' "${host% 201}" | jq -r .id 2>/dev/null)
	[[ "$own" == s-* && "$host" == s-* ]] || { fail "sessions: $own $host $(cat "$T_TMP/serve.log")"; rm -rf "$d"; t_assert; return; }
	nr -X POST "http://cordon/v1/sessions/$host/exec" -d '{"argv":["sh","-c","echo x >k"]}' >/dev/null
	out=$(nr -X POST "http://cordon/v1/sessions/$own/fork")
	if [[ "$out" == *"its workspace mode is direct"*409 ]]; then
		t_skip "no overlay workspace for a session of an ordinary user here"
	else
		expect_match "$out" ' 201$' "a fork of a session with its own workspace: $out"
		out=$(nr -X POST "http://cordon/v1/sessions/$host/fork")
		expect_match "$out" "cannot be forked: the session's workspace is $p, not a directory of its own.* 409$" "a fork of the host tree's: $out"
		setpriv --reuid 65534 --regid 65534 --clear-groups sh -c "mv '$p' '$p.real' && ln -s '$d/state/sessions/$host/work' '$p'"
		out=$(nr -X POST "http://cordon/v1/sessions/$host/fork")
		expect_match "$out" "cannot be forked.* 409$" "its name a link to the session's directory: $out"
	fi
	stop_server
	rm -rf "$d"
	t_assert
}

# A change set made from a stacked fork's snapshot lies over the fork's
# starting tree, which its workspace directory holds from the session's
# end: from then on it lists the stack's files it changes as modified and
# applies them (its start moved past the stack's copy with the session's),
# nothing that came after the snapshot.
test_fork_stack_snapshot_changeset() {
	stacked_fork '{"policy":{"filesystem":{"workspace_mode":"review"}}}' 'echo one >a; echo k >k; echo s >s' 'echo two >a; rm k; echo n >n' || return
	local a=$A b=$FID w out dir
	snapshot_or_skip || return
	out=$(api_code -X POST "http://cordon/v1/sessions/$b/snapshots/$PID_/changeset")
	expect_match "$out" ' 201$' "the snapshot's change set: $out"
	dir=$(printf '%s' "${out% 201}" | jq -r .dir)
	# Sealed at the session's end: before it, its host tree (the fork's
	# workspace directory, a lower layer of the running overlay) holds
	# nothing of the fork's start (attack19: an apply now broke the end).
	out=$("$CORDON" apply "$dir" 2>&1) && fail "applied before the session's end: $out"
	expect_match "$out" "sealed when that session ends" "why: $out"
	expect_eq "$(ls -A "$STATE/sessions/$b/work")" "" "nothing applied"
	expect_eq "$(run_in 'echo three >a; echo later >l; rm s')" ok "changes after the snapshot"
	out=$(api -X DELETE "http://cordon/v1/sessions/$b")
	expect_eq "$(printf '%s' "$out" | jq -r .changes.state)" kept "review: kept"
	w=$STATE/sessions/$b/work
	out=$("$CORDON" changes "$dir" 2>&1)
	expect_match "$out" "^modified .* a$" "a file of the stack it changes: modified: $out"
	out=$("$CORDON" apply "$dir" 2>&1) || fail "apply $dir: $out"
	expect_eq "$(cat "$w/a" "$w/n" "$w/s" | tr '\n' ' '; [ -e "$w/k" ] || echo no-k; [ -e "$w/l" ] || echo no-l)" "two n s no-k
no-l" "applied: the snapshot's changes, nothing after"
	kill -TERM "$SRV"
	wait "$SRV"
	t_assert
}

for t in test_snapshot_calls test_snapshot_while_running test_snapshot_budget test_snapshot_hostile test_snapshot_routes test_fork test_fork_while_running test_restore test_restore_as_an_exec_starts test_snapshot_entries_bounded_across_snapshots test_snapshot_deep_tree_few_descriptors test_restore_only_changes test_snapshot_changes test_fork_restore_byte_bound test_snapshot_changeset test_snapshot_changesets_entries_bounded test_restore_deep_tree_few_descriptors test_fork_stack test_fork_stack_depth test_fork_stack_server_killed test_restart_leaves_a_still_ending_session test_fork_stack_end_not_whole test_fork_stack_end_cut_short_moves_back test_fork_while_parent_ends test_snapshot_delete_not_held_by_another_snapshots_fork test_fork_stack_review test_fork_stack_snapshot_changeset test_fork_of_a_host_tree_session_refused test_fork_of_a_host_tree_session_refused_by_a_server_not_root; do
	t_run $t
done
