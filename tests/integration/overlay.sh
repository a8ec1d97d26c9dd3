# Workspace modes (README, "Workspace modes"): in overlay and review mode the
# run writes into a change set, the host sees nothing until it is applied.
. "$(dirname "$0")/../lib.sh"

# The workspaces on a filesystem an overlay can have (tests/lib.sh; on
# Debian 12's 6.1, /var/tmp: its /tmp is a tmpfs without idmapped mounts,
# where the default mode is direct, said in the report).
overlay_workspaces

# Each test works in $WS/w, so that the change set (next to the workspace, in
# $WS/.cordon-changes) goes with the test's own directory.
ws_init() {
	overlay_ws && mkdir -p d || return 1
	echo hi >a
	echo keep >k
	echo x >d/f
	echo moved >r
	chmod 644 a k d/f r
}
# review_run SCRIPT: a review run of sh -c SCRIPT in the workspace
# (cordon_run's RC, OUT, ERR and report R); KEPT: the change set it kept.
review_run() {
	cordon_run --workspace-mode review -- /bin/sh -c "$1"
	KEPT=$(changes_dir)
}
# The host's view of the workspace: every entry with its type, mode and content.
host_state() {
	(cd "$WS/w" && find . -mindepth 1 | sort | while read -r p; do
		if [ -L "$p" ]; then echo "$p L $(readlink "$p")"
		elif [ -f "$p" ]; then echo "$p $(stat -c %a "$p") $(cat "$p")"
		else echo "$p $(stat -c '%F %a' "$p")"; fi
	done)
}
EDITS='echo new >b; echo mod >>k; rm a; mv r r2; chmod 600 k; rm -r d; mkdir d; echo y >d/g; ln -s /etc/passwd L'
AFTER="./L L /etc/passwd
./b 644 new
./d directory 755
./d/g 644 y
./k 600 keep
mod
./r2 644 moved"

test_overlay_host_sees_nothing_until_the_end() {
	ws_init || return
	local before
	before=$(host_state)
	mkfifo "$T_TMP/in"
	# The run makes every kind of change, says so, and waits on its stdin.
	"$CORDON" run --report "$T_TMP/r.json" --ro "$BUILD" --workspace-mode overlay -- \
		/bin/sh -c "$EDITS; cat k; echo ready; read x" <"$T_TMP/in" >"$T_TMP/out" 2>"$T_TMP/err" &
	local pid=$!
	exec 3>"$T_TMP/in"
	local i=0
	# (Until the run ends: one that failed at its start is not waited for.)
	while ! grep -q ready "$T_TMP/out" 2>/dev/null && kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	expect_eq "$(cat "$T_TMP/out")" "keep
mod
ready" "the run sees its own writes at once: $(cat "$T_TMP/err")"
	expect_eq "$(host_state)" "$before" "the host sees none of them while the run is alive"
	echo go >&3
	exec 3>&-
	wait $pid
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	R=$T_TMP/r.json
	keep_report "$R"
	expect_eq "$(host_state)" "$AFTER" "everything after: created, modified, deleted, renamed, chmod, symlink"
	expect_eq "$(field .enforcement.workspace_mode) $(field .changes.state)" "overlay applied" "mode and state"
	expect_eq "$(field '[.outputs[] | "\(.change) \(.path)"] | sort | join(",")')" \
		"created L,created b,created d/g,created r2,deleted a,deleted d/f,deleted r,modified k" "outputs from the change set"
	expect_eq "$(field '.outputs[] | select(.path=="b") | .sha256')" "$(sha256sum <b | cut -d' ' -f1)" "hash of what was applied"
	expect_eq "$(stat -c %u b)" "$(id -u)" "applied files belong to the invoking user"
	expect_eq "$(ls -A "$WS/.cordon-changes" 2>/dev/null)" "" "an applied change set is gone"
	t_assert
}

test_review_changes_apply_discard() {
	ws_init || return
	local before d
	before=$(host_state)
	cordon_run --workspace-mode review -- /bin/sh -c "$EDITS"
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$(field .changes.state)" kept "review keeps the change set"
	d=$(changes_dir)
	expect_match "$d" "^$WS/.cordon-changes/" "the report names it, next to the workspace"
	expect_eq "$(host_state)" "$before" "nothing applied"
	expect_eq "$("$CORDON" changes "$d" | awk '{print $1, $NF}' | sort | tr '\n' ,)" \
		"created L,created b,created d/g,created r2,deleted a,deleted d/f,deleted r,modified k," "cordon changes"
	expect_eq "$("$CORDON" changes "$d" --json | jq -r '.changes[] | select(.path=="b") | "\(.bytes) \(.sha256)"')" \
		"4 $(echo new | sha256sum | cut -d' ' -f1)" "sizes and hashes"
	expect_match "$("$CORDON" changes "$d" --diff)" "^--- a/k" "a unified diff"
	expect_match "$("$CORDON" changes "$d" --diff)" $'\n''\+mod' "the diff shows the line added"
	"$CORDON" apply "$d" || fail "apply"
	expect_eq "$(host_state)" "$AFTER" "applied"
	[ -e "$d" ] && fail "the applied change set is removed"
	# And one thrown away.
	ws_init2=$(host_state)
	cordon_run --workspace-mode review -- /bin/sh -c 'echo z >z; rm b'
	d=$(changes_dir)
	"$CORDON" discard "$d" || fail "discard"
	expect_eq "$(host_state)" "$ws_init2" "discarded: the host as it was"
	[ -e "$d" ] && fail "the discarded change set is removed"
	t_assert
}

test_apply_refused_when_the_host_changed() {
	ws_init || return
	review_run 'echo run >k; echo run >n'
	local d=$KEPT out
	echo host >k
	out=$("$CORDON" apply "$d" 2>&1)
	expect_eq "$?" 1 "apply refused: $out"
	expect_match "$out" "$WS/w/k changed since the run started" "names the file"
	expect_eq "$(cat k) $([ -e n ] && echo n)" "host " "nothing applied"
	"$CORDON" apply --force "$d" || fail "--force"
	expect_eq "$(cat k) $(cat n)" "run run" "forced"
	t_assert
}

test_interrupted_apply_completed_or_rolled_back() {
	ws_init || return
	review_run 'for i in 1 2 3 4 5 6; do echo $i >n$i; done; echo mod >k; rm a'
	local d=$KEPT
	"$CORDON" apply --test-apply-crash-after 3 "$d" 2>/dev/null
	expect_eq "$?" 137 "the apply was killed"
	expect_eq "$(ls -A "$d/0/upper" | wc -l)" 5 "it stopped between entries (3 of 8 done)"
	expect_match "$("$CORDON" changes "$d")" "interrupted" "changes says so"
	"$CORDON" apply "$d" || fail "completed"
	expect_eq "$(cat n1 n2 n3 n4 n5 n6 k | tr '\n' ' ')$([ -e a ] && echo a)" "1 2 3 4 5 6 mod " "all applied"
	[ -e "$d" ] && fail "completed: removed"
	# Interrupted again, then rolled back to what the host had.
	local before
	before=$(host_state)
	cordon_run --workspace-mode review -- /bin/sh -c 'echo again >k; echo z >z; rm n1; rm -r d'
	d=$(changes_dir)
	"$CORDON" apply --test-apply-crash-after 3 "$d" 2>/dev/null
	expect_eq "$?" 137 "killed again"
	[ "$(host_state)" = "$before" ] && fail "the crash left part of it applied"
	"$CORDON" discard "$d" || fail "rolled back"
	expect_eq "$(host_state)" "$before" "the host as it was before the apply"
	t_assert
}

# Outside review attack15: an apply that had completed, killed while its
# change set was being removed, left its journal, and a later discard
# replayed it: the files it created removed, those it replaced kept new
# (their backups went with the layers): a completed apply undone in part,
# silently. The journal goes first now; the set left is discarded as any.
test_completed_apply_not_undone_by_a_later_discard() {
	ws_init || return
	review_run 'echo 1 >n1; echo mod >k; rm a'
	local d=$KEPT after
	"$CORDON" apply --test-apply-crash-after -1 "$d" 2>/dev/null
	expect_eq "$?" 137 "the apply was killed before its change set was removed"
	after=$(host_state)
	expect_eq "$(cat n1 k | tr '\n' ' ')$([ -e a ] && echo a)" "1 mod " "all applied"
	"$CORDON" discard "$d" >/dev/null 2>&1 || fail "the discard of what is left"
	expect_eq "$(host_state)" "$after" "the host as the apply left it"
	[ -e "$d" ] && fail "the change set left after the discard"
	t_assert
}

test_concurrent_runs_have_their_own_change_sets() {
	ws_init || return
	"$CORDON" run --report "$T_TMP/r1" --ro "$BUILD" --workspace-mode review -- /bin/sh -c 'echo 1 >one; sleep 0.3' &
	"$CORDON" run --report "$T_TMP/r2" --ro "$BUILD" --workspace-mode review -- /bin/sh -c 'echo 2 >two; sleep 0.3' &
	wait
	local d1 d2
	d1=$(jq -r .changes.dir "$T_TMP/r1")
	d2=$(jq -r .changes.dir "$T_TMP/r2")
	[ "$d1" != "$d2" ] || fail "two change sets: $d1"
	expect_eq "$("$CORDON" changes "$d1" | awk '{print $NF}')" one "the first has its own file only"
	expect_eq "$("$CORDON" changes "$d2" | awk '{print $NF}')" two "the second too"
	"$CORDON" apply "$d1" && "$CORDON" apply "$d2" || fail "both apply"
	expect_eq "$(cat one two | tr '\n' ' ')" "1 2 " "both applied"
	t_assert
}

test_special_files_and_setid_refused() {
	ws_init || return
	cordon_run --workspace-mode overlay -- /usr/bin/python3 -c '
import os, socket
os.mkfifo("fifo")
s = socket.socket(socket.AF_UNIX); s.bind("sock")
open("plain", "w").write("p")
'
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$(field '.changes.refused | sort | join(",")')" "$WS/w/fifo: a FIFO,$WS/w/sock: a socket" "refused and reported"
	expect_eq "$(ls -A | grep -c -e fifo -e sock)" 0 "neither reaches the host"
	expect_eq "$(field '[.outputs[] | select(.type == "other") | .path] | join(",")')" "fifo,sock" \
		"still outputs (changes the run made), unhashed"
	expect_eq "$(cat plain)" p "the rest is applied"
	# A set-id bit in a change set (the run's own chmod is refused by the
	# filter; an upper layer is hostile all the same) is dropped by the apply.
	review_run 'cp /bin/true t; chmod 755 t; mkdir sd'
	local d=$KEPT
	chmod 6755 "$d/0/upper/t"
	chmod 2755 "$d/0/upper/sd"
	"$CORDON" apply "$d" || fail "apply"
	expect_eq "$(stat -c %a t) $(stat -c %a sd)" "755 755" "no setuid/setgid bit survives the apply"
	t_assert
}

test_on_failure() {
	ws_init || return
	cordon_run --workspace-mode overlay -- /bin/sh -c 'echo 1 >f1; exit 3'
	expect_eq "$(field .changes.state) $(cat f1)" "applied 1" "apply by default (today's behaviour)"
	cordon_run --workspace-mode overlay --on-failure discard -- /bin/sh -c 'echo 2 >f2; exit 3'
	expect_eq "$(field .changes.state) $([ -e f2 ] && echo f2)" "discarded " "discard"
	cordon_run --workspace-mode overlay --on-failure keep -- /bin/sh -c 'echo 3 >f3; exit 3'
	expect_eq "$(field .changes.state) $([ -e f3 ] && echo f3)" "kept " "keep"
	"$CORDON" apply "$(changes_dir)" && expect_eq "$(cat f3)" 3 "a kept one applies later"
	cordon_run --workspace-mode overlay --on-failure discard -- /bin/sh -c 'echo 4 >f4'
	expect_eq "$(field .changes.state) $(cat f4)" "applied 4" "a run that ends ok is applied"
	t_assert
}

test_fallback_needs_allow_weaker() {
	ws_init || return
	# The change set's place is visible to the run: no overlay.
	cordon_run --workspace-mode overlay --ro "$WS" -- /bin/sh -c 'echo 1 >f'
	expect_eq "$(field .status)" setup-error "refused without allow_weaker: $ERR"
	expect_match "$(field .reason)" "visible to the run" "the reason"
	echo '{"enforcement": {"allow_weaker": ["workspace"]}, "filesystem": {"workspace_mode": "overlay"}}' >"$T_TMP/p.json"
	cordon_run --policy "$T_TMP/p.json" --ro "$WS" -- /bin/sh -c 'echo 1 >f'
	expect_eq "$(field .status) $(field .enforcement.workspace_mode) $(cat f)" "ok direct 1" "fell back: $ERR"
	expect_match "$(field .enforcement.workspace_mode_reason)" "overlay asked, direct instead: .*visible to the run" "the reason"
	t_assert
}

test_overlay_is_the_default() {
	ws_init || return
	chmod 755 .
	cordon_run -- /bin/sh -c 'echo more >>k; echo n >n; chmod 777 .'
	expect_eq "$RC $(field .enforcement.workspace_mode) $(field .enforcement.workspace_mode_reason) $(field .changes.state)" \
		"0 overlay null applied" "no flag, no policy: overlay: $ERR"
	expect_eq "$(cat k n | tr '\n' ' ')" "keep more n " "applied"
	expect_eq "$(stat -c %a .) $(field '.root_restored | length')" "755 0" "the root's chmod stayed in the change set"
	expect_eq "$(field '[.outputs[] | "\(.change) \(.path)"] | join(",")')" "modified k,created n" "outputs"
	expect_match "$("$CORDON" explain)" "workspace mode: overlay" "explain"
	# Where the default cannot be had, direct, with the reason, without
	# allow_weaker (asked for, overlay would be a setup-error: above).
	cordon_run --ro "$WS" -- /bin/sh -c 'echo 2 >f'
	expect_eq "$RC $(field .enforcement.workspace_mode) $(cat f)" "0 direct 2" "the default fell back: $ERR"
	expect_match "$(field .enforcement.workspace_mode_reason)" "^overlay \\(the default\\), direct instead: .*visible to the run" "the reason"
	t_assert
}

# As root, a workspace without idmapped mounts (ramfs) cannot be an
# overlay: asked for, the run is refused, and its report has no change set
# (it said "applied"), none is left behind.
test_late_refusal_has_no_change_set() {
	[ "$(id -u)" = 0 ] || { t_skip "needs root (to mount a ramfs)"; return; }
	mkdir r && mount -t ramfs -o mode=755 ramfs r || { t_skip "cannot mount a ramfs"; return; }
	mkdir r/w && cd r/w || return
	cordon_run --workspace-mode overlay -- /bin/sh -c 'echo 1 >f'
	if [ "$RC" = 0 ]; then
		t_skip "ramfs has idmapped mounts on this kernel"
		return
	fi
	expect_eq "$(field .status) $(field .changes)" "setup-error null" "refused, no change set: $ERR"
	expect_match "$(field .reason)" "has no idmapped mounts" "the reason"
	expect_eq "$(ls -A "$WS/r/.cordon-changes" 2>/dev/null)" "" "none left behind"
	t_assert
}

# A file granted on its own cannot be an overlay (layers are directories):
# the run is direct as a whole, the reason names the file.
test_rw_file_makes_the_run_direct() {
	ws_init || return
	echo old >"$WS/one"
	cordon_run --rw "$WS/one" -- /bin/sh -c "echo new >'$WS/one'; echo 1 >f"
	expect_eq "$RC $(field .enforcement.workspace_mode) $(cat "$WS/one") $(cat f)" "0 direct new 1" "direct: $ERR"
	expect_match "$(field .enforcement.workspace_mode_reason)" \
		"^overlay \(the default\), direct instead: the writable path $WS/one is not a directory" "the reason names it"
	t_assert
}

# A .cordon-changes someone else made (a file, a link, a directory of
# another owner's) turns overlay off: said in the report and in one line on
# stderr, naming it.
test_squatted_change_set_dir_said() {
	ws_init || return
	local top=.cordon-changes
	[ "$(id -u)" = 0 ] || top=.cordon-changes-$(id -u)
	echo squat >"$WS/$top"
	cordon_run -- /bin/sh -c 'echo 1 >f'
	expect_eq "$RC $(field .enforcement.workspace_mode) $(cat f)" "0 direct 1" "fell back to direct: $ERR"
	expect_match "$(field .enforcement.workspace_mode_reason)" "$WS/$top is not a directory" "the report names it"
	expect_eq "$(grep -c "^cordon: warning: workspace mode .*$WS/$top is not a directory" <<<"$ERR")" 1 \
		"one line on stderr names it: $ERR"
	rm "$WS/$top"
	mkdir "$WS/$top" && chown 65534 "$WS/$top"
	cordon_run -- /bin/sh -c 'echo 2 >f'
	expect_eq "$RC $(field .enforcement.workspace_mode) $(cat f)" "0 direct 2" "fell back to direct: $ERR"
	expect_eq "$(grep -c "^cordon: warning: workspace mode .*$WS/$top belongs to uid 65534" <<<"$ERR")" 1 \
		"one line on stderr names it: $ERR"
	rmdir "$WS/$top"
	cordon_run -- /bin/sh -c 'echo 3 >f'
	expect_eq "$RC $(field .enforcement.workspace_mode) $(cat f) [$ERR]" "0 overlay 3 []" "overlay, nothing said"
	# It stays (listed, masked in later runs). The user's own made
	# writable by others (a concurrent run's chmod): its mode put right.
	chmod 777 "$WS/$top"
	cordon_run -- /bin/sh -c 'echo 4 >f'
	expect_eq "$RC $(field .enforcement.workspace_mode) $(cat f) $(stat -c %a "$WS/$top")" "0 overlay 4 755" \
		"the user's own directory: its mode put right: $ERR"
	t_assert
}

test_overlay_paths_beyond_bounds_kept() {
	ws_init || return
	# Paths past the change set's walk (250 levels of 255-byte names, 64
	# KiB): it is kept, not applied in part, and outputs says it was cut
	# (it said nothing, untruncated).
	cordon_run -- /usr/bin/python3 -c "
import os
fd = os.open('.', os.O_RDONLY)
for i in range(250):
    os.mkdir('x' * 255, dir_fd=fd); fd = os.open('x' * 255, os.O_RDONLY, dir_fd=fd)
os.close(os.open('f', os.O_CREAT | os.O_WRONLY, dir_fd=fd))"
	expect_eq "$RC $(field .changes.state) $(field .outputs_truncated) $(field .truncated.outputs.reason)" \
		"0 kept true walk-path-bytes" "cut, said, kept: $ERR"
	expect_match "$(field .changes.reason)" "beyond cordon's bounds" "the reason"
	[ ! -e "$(printf 'x%.0s' $(seq 255))" ] || fail "applied in part"
	"$CORDON" discard "$(changes_dir)" || fail "discard"
	t_assert
}

# What the apply at the end of a run costs is bounded: each directory takes
# a synced journal record; 1,001 of them (and a deletion) are more than it
# takes (1,000), so the change set is kept, not applied, with the reason.
test_apply_steps_bounded() {
	ws_init || return
	cordon_run -- /bin/sh -c 'rm a; mkdir $(seq -f d%g 1000)'
	expect_eq "$RC $(field .changes.state) $(field '.outputs | length')" "0 kept 1" "kept: $ERR"
	expect_match "$(field .changes.reason)" "needs 1001 synced steps .* more than the 1000 .*: kept, not applied" \
		"the reason"
	[ -e a ] && [ ! -e d1 ] || fail "applied in part"
	"$CORDON" discard "$(changes_dir)" || fail "discard"
	t_assert
}

test_workspace_below_a_private_directory() {
	[ "$(id -u)" = 0 ] || { t_skip "needs root (the run's uid is then another)"; return; }
	ws_init || return
	# The run's own uid may not pass a 0700 directory of root's above its
	# change set: the supervisor hands the layer over.
	chmod 700 "$WS"
	cordon_run --workspace-mode overlay -- /bin/sh -c 'echo more >>k; cat k'
	expect_eq "$RC $OUT" "0 keep
more" "the run writes: $ERR"
	expect_eq "$(cat k | tr '\n' ' ')" "keep more " "applied"
	t_assert
}

test_evidence_in_review_mode() {
	ws_init || return
	printf '%s\n' 'sEcReT-value-0123456789' >"$T_TMP/token"
	cordon_run --workspace-mode review --secret TOKEN=file:"$T_TMP/token" -- /bin/sh -c 'printf "x=%s\n" "$TOKEN" >out.txt'
	expect_eq "$(field -c '.secret_exposures')" '[{"name":"TOKEN","path":"out.txt","where":"content"}]' \
		"a secret in the kept change set is found there: $ERR"
	expect_eq "$(field '.privilege_sweep.complete // "none"')" none "no sweep of a host the run did not touch"
	# What the run wrote is nobody else's to read while it is kept (review).
	local d
	d=$(changes_dir)
	expect_eq "$(stat -c %a "$d/0/upper") $(stat -c %a "$d/0/work")" "700 700" "the kept layers are private"
	t_assert
}

# The apply at the end of an overlay run does not overwrite a host file that
# changed since the run started: that entry is held back (changes.conflicts),
# the rest applied; `cordon apply` refuses it, `--force` applies it.
test_end_of_run_apply_keeps_host_changes() {
	ws_init || return
	mkfifo "$T_TMP/in" "$T_TMP/out"
	"$CORDON" run --report "$T_TMP/r.json" --ro "$BUILD" --workspace-mode overlay -- \
		/bin/sh -c 'echo run >k; echo run >n; echo ready; read x' <"$T_TMP/in" >"$T_TMP/out" 2>"$T_TMP/err" &
	local pid=$! line
	exec 3>"$T_TMP/in" 4<"$T_TMP/out"
	read -r line <&4
	expect_eq "$line" ready "the run is under way: $(cat "$T_TMP/err")"
	echo host >k
	echo go >&3
	exec 3>&- 4<&-
	wait $pid
	R=$T_TMP/r.json
	keep_report "$R"
	expect_eq "$(field .status) $(field .changes.state)" "ok applied" "status: $(cat "$T_TMP/err")"
	expect_eq "$(field -c .changes.conflicts)" "[\"$WS/w/k\"]" "the host's change is named"
	expect_eq "$(cat k) $(cat n)" "host run" "kept, the rest applied"
	local d
	d=$(changes_dir)
	"$CORDON" apply "$d" 2>/dev/null && fail "cordon apply refuses it"
	"$CORDON" apply --force "$d" || fail "--force"
	expect_eq "$(cat k)" run "forced"
	t_assert
}

# What `cordon changes` prints of a change set is the run's: names are shown
# escaped (no escape sequence reaches the terminal), and --diff opens regular
# files only (a host FIFO the run replaced would block diff forever).
test_changes_output_is_safe() {
	ws_init || return
	mkfifo p
	cordon_run --workspace-mode review -- /bin/sh -c 'rm p; echo x >p; printf y >"$(printf "evil\033]0;owned\007")"
		for n in "caf\303\251" "c1\302\23331m" "rlo\342\200\256gpj.exe" "bad\377"; do printf y >"$(printf "$n")"; done'
	expect_eq "$RC" 0 "run: $ERR"
	local d out
	d=$(changes_dir)
	out=$(timeout 60 "$CORDON" changes "$d" 2>&1)
	expect_eq "$?" 0 "changes"
	case "$out" in *$'\033'*|*$'\007'*) fail "control bytes reached the terminal: $out" ;; esac
	expect_match "$out" 'evil\\x1b\]0;owned\\x07' "shown escaped"
	# Bytes past ASCII: printable UTF-8 as it is; a C1 control (CSI), a
	# bidirectional override (a name shown reversed) or an invalid byte escaped.
	expect_match "$out" "$(printf 'caf\303\251')\$" "UTF-8 text as it is"
	expect_match "$out" 'c1\\xc2\\x9b31m' "a C1 control escaped"
	expect_match "$out" 'rlo\\xe2\\x80\\xaegpj\.exe' "a bidirectional override escaped"
	expect_match "$out" 'bad\\xff' "an invalid byte escaped"
	case "$out" in *$'\302\233'*|*$'\342\200\256'*|*$'\377'*) fail "raw bytes reached the terminal" ;; esac
	out=$(timeout 60 "$CORDON" changes --diff "$d" 2>&1)
	expect_eq "$?" 0 "changes --diff ends (the host's FIFO is not read)"
	case "$out" in *$'\033'*) fail "control bytes in the diff: $out" ;; esac
	expect_match "$out" '\+\+\+ b/evil\\x1b' "the diff's label escaped"
	"$CORDON" discard "$d" || fail "discard"
	t_assert
}

# A created or deleted file's diff is written by cordon itself (one diff
# process per file was a fork storm for a run that made thousands): what
# GNU diff -u prints for it, with no diff program to be found at all.
test_changes_diff_of_created_and_deleted_files() {
	overlay_ws || return
	printf 'x\ny\n' >gone
	printf 'lone' >gone1
	chmod 644 gone gone1
	review_run "rm gone gone1; printf 'a\nb\nc\n' >new3; printf 'one' >one; : >empty; printf 'a\0b\n' >bin"
	expect_eq "$RC" 0 "run: $ERR"
	local out bare want f
	out=$(timeout 60 "$CORDON" changes --diff "$KEPT" 2>&1)
	bare=$(timeout 60 env PATH=/nonexistent "$CORDON" changes --diff "$KEPT" 2>&1)
	expect_eq "$bare" "$out" "the same without a diff program"
	# What GNU diff says of each, in the listing's order.
	mkdir -p "$T_TMP/ref"
	printf 'a\0b\n' >"$T_TMP/ref/bin"
	: >"$T_TMP/ref/empty"
	printf 'a\nb\nc\n' >"$T_TMP/ref/new3"
	printf 'one' >"$T_TMP/ref/one"
	want=
	for f in bin empty gone gone1 new3 one; do
		case $f in
		gone*) want+=$'\n'$(diff -u --label "a/$f" --label /dev/null "$f" /dev/null) ;;
		*) want+=$'\n'$(diff -u --label /dev/null --label "b/$f" /dev/null "$T_TMP/ref/$f") ;;
		esac
	done
	expect_eq "$(printf '%s\n' "$out" | grep -v '^$')" "$(printf '%s\n' "$want" | grep -v '^$')" "as GNU diff -u says it"
	"$CORDON" discard "$KEPT" || fail "discard"
	t_assert
}

# A tree deeper than a change set's walk goes (256 levels) is left out of
# the listing, which says it is cut; every other entry is still listed
# (the walk used to end at the deep directory, losing what came after it).
test_changes_listing_past_a_deep_tree() {
	overlay_ws || return
	review_run 'i=0; while [ $i -lt 60 ]; do echo $i >f$i; i=$((i+1)); done
		p=deep; i=0; while [ $i -lt 300 ]; do p=$p/d; i=$((i+1)); done; mkdir -p "$p"'
	expect_eq "$RC" 0 "run: $ERR"
	local j
	j=$("$CORDON" changes --json "$KEPT")
	expect_eq "$(printf '%s' "$j" | jq '[.changes[] | select(.path | test("^f[0-9]+$"))] | length')" 60 "every file listed"
	expect_eq "$(printf '%s' "$j" | jq -r .truncated)" true "the listing says it is cut"
	expect_match "$("$CORDON" changes "$KEPT")" 'the list is cut: .*dep' "and why"
	"$CORDON" discard "$KEPT" || fail "discard"
	t_assert
}

# The diff `cordon changes --diff` runs ends with it: the server kills a
# changes past its time or output bound, and a diff left behind would go
# on reading the session's files (outside review, attack10). A stand-in
# diff that never ends, found first on PATH, records its pid.
test_diff_dies_with_changes() {
	ws_init || return
	echo old >f
	cordon_run --workspace-mode review -- /bin/sh -c 'echo new >f'
	expect_eq "$RC" 0 "run: $ERR"
	local d fake=$T_TMP/bin pid i
	d=$(changes_dir)
	mkdir -p "$fake"
	printf '#!/bin/sh\necho $$ >%s/diff.pid\nexec sleep 1000\n' "$T_TMP" >"$fake/diff"
	chmod +x "$fake/diff"
	PATH=$fake:$PATH "$CORDON" changes --diff "$d" >/dev/null 2>&1 &
	local cpid=$!
	for i in $(seq 1 400); do
		[ -s "$T_TMP/diff.pid" ] && break
		sleep 0.05
	done
	pid=$(cat "$T_TMP/diff.pid" 2>/dev/null)
	[ -n "$pid" ] || { kill -9 "$cpid"; fail "the stand-in diff never started"; return 1; }
	kill -9 "$cpid"
	wait "$cpid" 2>/dev/null
	for i in $(seq 1 400); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 "$pid"
		fail "diff outlived cordon changes"
	fi
	"$CORDON" discard "$d" || fail "discard"
	t_assert
}

test_explain_shows_the_mode() {
	ws_init || return
	expect_match "$("$CORDON" explain --workspace-mode review -- true)" "workspace mode: review" "explain"
	expect_eq "$("$CORDON" explain --json --workspace-mode overlay -- true | jq -r .workspace_mode)" overlay "explain --json"
	expect_eq "$("$CORDON" explain --json -- true | jq -r .workspace_mode)" overlay "the default"
	expect_match "$("$CORDON" explain -- true)" "workspace mode: overlay .*; the default: direct where an overlay cannot be had" "the default, in words"
	expect_eq "$("$CORDON" explain --json --workspace-mode direct -- true | jq -r .workspace_mode)" direct "direct asked"
	t_assert
}

test_non_root_overlay() {
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null; then
		t_skip "unprivileged user namespaces are disabled on this host"; return
	fi
	[ "$(id -u)" = 0 ] || { t_skip "needs root to set up a workspace of uid 65534"; return; }
	ws_init || return
	chown -R 65534:65534 "$WS"
	# root's change sets next to the same workspace (a kept review): the
	# user's go to their own directory beside it.
	mkdir -m 711 "$WS/.cordon-changes"
	R=$T_TMP/r.json
	chmod 777 "$T_TMP"
	local out
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --report "$R" --ro "$BUILD" \
		--workspace-mode review -- /bin/sh -c 'echo u >u; echo mod >>k; rm a; cat k' 2>&1)
	keep_report "$R"
	expect_eq "$out" "keep
mod" "the run sees its writes"
	expect_eq "$(field .enforcement.workspace_mode) $(field .changes.state)" "review kept" "an ordinary user's overlay: $out"
	expect_eq "$(cat k)$([ -e u ] && echo u)" "keep" "nothing applied yet"
	expect_match "$(changes_dir)" "^$WS/.cordon-changes-65534/[^/]+$" "the user's own change-set directory"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" apply "$(changes_dir)" || fail "apply as the user"
	expect_eq "$(cat u k | tr '\n' ' ')$([ -e a ] && echo a)" "u keep mod " "applied"
	expect_eq "$(stat -c %u u)" 65534 "owned by the user"
	t_assert
}

# The run's file names are written into the journal an apply keeps; a
# rollback reads them back exactly (the length frames each name), never as
# records: a name beginning with newlines once shifted the parser, and the
# records forged in a later name made the workspace's parent 0777, a
# root-owned file setuid, or deleted the workspace (review attack3/01).
test_journal_names_never_read_as_records() {
	ws_init || return
	cp /bin/true tool && chmod 755 tool
	chmod 755 "$WS"
	local before d
	cordon_run --workspace-mode review -- /bin/sh -c '
D=$(printf "\n\n5"); mkdir "$D"
: >"$D/$(printf "aaaaaM 0 511 2\n..\nM 0 2541 4\ntool\nC 0 0 1\n.\nz")"'
	before=$(host_state)
	d=$(changes_dir)
	"$CORDON" apply --test-apply-crash-after 1 "$d" 2>/dev/null
	expect_eq "$?" 137 "the apply was killed"
	"$CORDON" discard "$d" || fail "rolled back"
	expect_eq "$(stat -c %a "$WS") $(stat -c %a tool)" "755 755" "no forged mode"
	expect_eq "$(host_state)" "$before" "the host as it was"
	# A journal that does not parse is refused whole: nothing undone.
	cordon_run --workspace-mode review -- /bin/sh -c 'echo z >z'
	d=$(changes_dir)
	printf 'C 0 0 1\nk\nC 0 0 2\n..\n' >"$d/journal"
	local out
	out=$("$CORDON" discard "$d" 2>&1) && fail "a malformed journal was acted on"
	expect_match "$out" "journal: malformed record at offset 10" "the error names the journal and offset"
	[ -e k ] || fail "nothing was undone"
	t_assert
}

# A kept change set lies in the writable view of a later run whose
# workspace is its parent: that run may not change it (meta, protect, a
# layer's host or upper, the journal), or the owner's `cordon apply` would
# write what it chose where it chose, as root (review attack3/06).
test_kept_change_set_out_of_a_later_runs_reach_root() {
	ws_init || return
	mkdir "$WS/outside"
	review_run 'echo result >out'
	local d=$KEPT
	cd "$WS" || return
	cordon_run -- /bin/sh -c "
for d in .cordon-changes/*/; do
	sed -i 's/^layers 1\$/layers 2/' \"\$d/meta\"
	: >\"\$d/protect\"
	mkdir -p \"\$d/1/upper\" \"\$d/1/work\"
	printf %s '$WS/outside' >\"\$d/1/host\"
	echo pwned >\"\$d/1/upper/pwn\"
	echo pwned >\"\$d/0/upper/.bashrc\"
done"
	"$CORDON" apply "$d" >/dev/null 2>&1
	[ -e "$WS/outside/pwn" ] && fail "root's apply wrote outside the workspace what a run chose"
	[ -e "$WS/w/.bashrc" ] && fail "a run's file added to another's change set"
	expect_eq "$(cat "$WS/w/out")" result "the kept change set applied as it was made"
	t_assert
}

# The same with the change set deeper than the top of the later run's
# workspace (WS/p/.cordon-changes, the later run's workspace WS): the names
# hold at any depth, as git's do.
test_kept_change_set_deeper_in_a_later_run() {
	mkdir -p "$WS/p/w" "$WS/outside" && cd "$WS/p/w" || return
	echo hi >a
	review_run 'echo result >out'
	local d=$KEPT
	cd "$WS" || return
	cordon_run -- /bin/sh -c "
ls -A p/.cordon-changes | wc -l
for d in p/.cordon-changes/*/; do
	sed -i 's/^layers 1\$/layers 2/' \"\$d/meta\"
	: >\"\$d/protect\"
	mkdir -p \"\$d/1/upper\" \"\$d/1/work\"
	printf %s '$WS/outside' >\"\$d/1/host\"
	echo pwned >\"\$d/1/upper/pwn\"
done"
	# Listed beside the key (the directories of change sets this user's
	# cordon made): masked at any depth, as at the top of a path.
	expect_eq "$(echo "$OUT" | head -1)" 0 "a kept change set deeper in a later run's workspace is masked: $ERR"
	expect_match "$("$CORDON" explain)" "masked +$WS/p/.cordon-changes " "explain says so"
	"$CORDON" apply "$d" >/dev/null 2>&1
	[ -e "$WS/outside/pwn" ] && fail "root's apply wrote outside the workspace what a run chose"
	expect_eq "$(cat "$WS/p/w/out")" result "the kept change set applied as it was made"
	t_assert
}

# The same for an ordinary user: their change sets' directory is theirs,
# and every run of theirs writes as them (review attack3/03).
test_kept_change_set_out_of_a_later_runs_reach_user() {
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null; then
		t_skip "unprivileged user namespaces are disabled on this host"; return
	fi
	ws_init || return
	mkdir "$WS/home"
	echo 'echo safe' >"$WS/home/.bashrc"
	chown -R 65534:65534 "$WS"
	chmod 777 "$T_TMP"
	R=$T_TMP/r.json
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --report "$R" --ro "$BUILD" \
		--workspace-mode review -- /bin/sh -c 'echo result >out' >/dev/null 2>&1 || fail "the review run"
	local d
	d=$(changes_dir)
	cd "$WS" || return
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --report "$T_TMP/r2.json" --ro "$BUILD" -- /bin/sh -c "
for d in .cordon-changes-65534/*/; do
	printf %s '$WS/home' >\"\$d/0/host\"
	: >\"\$d/protect\"
	echo 'echo PWNED' >\"\$d/0/upper/.bashrc\"
done" >/dev/null 2>&1
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" apply "$d" >/dev/null 2>&1
	expect_eq "$(cat "$WS/home/.bashrc")" "echo safe" "the user's .bashrc untouched"
	expect_eq "$(cat "$WS/w/out")" result "the kept change set applied as it was made"
	t_assert
}

# A kept change set is masked in every later run's view (an empty
# read-only directory), at the top of its workspace or of a read-only path,
# and so are other users' .cordon-changes-UID; an ordinary user's too.
test_kept_change_sets_masked() {
	ws_init || return
	review_run 'echo secret >out'
	local d=$KEPT
	mkdir -p "$WS/.cordon-changes-1000/x" && echo theirs >"$WS/.cordon-changes-1000/x/f"
	chown -R 1000 "$WS/.cordon-changes-1000" && chmod -R a+rX "$WS/.cordon-changes-1000"
	local see='for c in .cordon-changes .cordon-changes-1000; do printf "%s:%s " $c "$(ls -A $c | wc -l)"; done
cat .cordon-changes*/*/*/upper/out .cordon-changes-1000/x/f 2>/dev/null; touch .cordon-changes/y 2>/dev/null && echo wrote; true'
	cd "$WS" || return
	cordon_run -- /bin/sh -c "$see"
	expect_eq "$RC $OUT" "0 .cordon-changes:0 .cordon-changes-1000:0 " "masked in a workspace: $ERR"
	mkdir "$WS/v" && cd "$WS/v" || return
	cordon_run --ro "$WS" -- /bin/sh -c "cd '$WS' && { $see; }"
	expect_eq "$RC $OUT" "0 .cordon-changes:0 .cordon-changes-1000:0 " "masked in a read-only path: $ERR"
	expect_match "$("$CORDON" explain --ro "$WS")" "masked" "explain says so"
	"$CORDON" discard "$d" || fail "discard"
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null; then
		t_assert
		return
	fi
	rm -rf "$WS/.cordon-changes-1000" "$WS/v"
	chown -R 65534:65534 "$WS"
	chmod 777 "$T_TMP"
	cd "$WS/w" || return
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --report "$T_TMP/r.json" --ro "$BUILD" \
		--workspace-mode review -- /bin/sh -c 'echo secret >out' >/dev/null 2>&1 || fail "the user's review run"
	cd "$WS" || return
	local out
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --ro "$BUILD" -- /bin/sh -c \
		'ls -A .cordon-changes-65534 | wc -l; cat .cordon-changes-65534/*/*/upper/out 2>&1 | grep -c secret' 2>&1)
	expect_eq "$out" "0
0" "a user's own kept change set masked in their later run"
	t_assert
}

# meta names the run's host uid, the owner of each upper layer: an upper
# layer of anyone else's is refused.
test_meta_names_the_run_uid() {
	ws_init || return
	review_run 'echo result >out'
	local d=$KEPT u
	u=$(field .enforcement.sandbox_host_uid)
	expect_eq "$(grep '^run ' "$d/meta")" "run $u $u" "meta names the run's uid: $ERR"
	expect_eq "$(stat -c %u "$d/0/upper")" "$u" "the upper layer is the run's"
	chown 65533 "$d/0/upper"
	expect_match "$("$CORDON" apply "$d" 2>&1)" "0/upper: not the run's upper layer \(owner uid 65533, the run's $u\)" \
		"another's upper layer refused"
	[ -e out ] && fail "applied"
	chown "$u" "$d/0/upper"
	"$CORDON" apply "$d" || fail "the change set as made is applied"
	expect_eq "$(cat out)" result "applied"
	t_assert
}

# A change set whose control files are not the caller's own and
# mode-restricted is refused whole.
test_change_set_control_files_checked() {
	ws_init || return
	review_run 'echo result >out'
	local d=$KEPT
	chmod g+w "$d/meta"
	"$CORDON" apply "$d" >/dev/null 2>&1 && fail "a group-writable meta accepted"
	chmod g-w "$d/meta"
	chmod g+w "$d/0"
	"$CORDON" apply "$d" >/dev/null 2>&1 && fail "a group-writable layer accepted"
	chmod g-w "$d/0"
	[ -e out ] && fail "applied"
	"$CORDON" apply "$d" || fail "the change set as made is applied"
	expect_eq "$(cat out)" result "applied"
	t_assert
}

# Outside review 6 F2: a run lays out what looks like a change set in its
# workspace (meta, 0/host naming a directory it cannot write, 0/upper with
# its content, a far-future start that turned off the host-changed check);
# written to the host (directly, or by the overlay's apply) it is root's,
# and `cordon apply` of it wrote where 0/host said. Only a change set this
# user's cordon sealed where it made it is opened.
test_forged_change_set_refused() {
	ws_init || return
	mkdir "$T_TMP/victim" && echo orig >"$T_TMP/victim/f"
	local mode lay="mkdir -p evil/0/upper && printf 'cordon-changes 1\nstarted 9999999999000000000\nowner 0 0\nrun 0 0\nlayers 1\n' >evil/meta && printf %s '$T_TMP/victim' >evil/0/host && echo pwned >evil/0/upper/f && chmod 700 evil evil/0 && chmod 600 evil/meta evil/0/host"
	for mode in direct overlay; do
		cordon_run --workspace-mode $mode -- /bin/sh -c "$lay"
		expect_eq "$RC $(stat -c %u evil/meta)" "0 $(id -u)" "$mode: laid out, the invoking user's on the host: $ERR"
		expect_match "$("$CORDON" apply "$WS/w/evil" 2>&1)" "evil: no seal" "$mode: refused"
		expect_eq "$(cat "$T_TMP/victim/f")" orig "$mode: nothing written where 0/host said"
		rm -rf evil
	done
	t_assert
}

# Outside review attack14: the change set's key is loaded before the clone
# and held until changeset_begin (sync 2), so the run's init began with a
# copy of it in its memory, kept for the whole run (init stays to reap; a
# session's agent is init). As an injected secret's value is, that copy is
# dropped at once: no process of the run holds the key.
test_change_set_key_not_in_the_runs_memory() {
	[ "$(id -u)" = 0 ] || { t_skip "reads the run's init's memory (root's CAP_SYS_PTRACE)"; return; }
	overlay_ws || return
	mkdir -p "$T_TMP/state" && chmod 700 "$T_TMP/state"
	export CORDON_STATE_DIR="$T_TMP/state"
	"$CORDON" run --ro "$BUILD" --workspace-mode review -- /bin/sh -c 'echo started; exec sleep 60' >"$T_TMP/k.out" 2>"$T_TMP/k.err" &
	local sup=$! init=
	for _ in $(seq 1200); do grep -q started "$T_TMP/k.out" && break; kill -0 "$sup" 2>/dev/null || break; sleep 0.05; done
	init=$(pgrep -P "$sup" | head -1)
	if [ -z "$init" ] || [ ! -s "$CORDON_STATE_DIR/changeset.key" ]; then
		kill "$sup" 2>/dev/null; wait "$sup"; unset CORDON_STATE_DIR
		fail "the run did not start ($(cat "$T_TMP/k.err"))"; return
	fi
	local found
	found=$(python3 - "$CORDON_STATE_DIR/changeset.key" "$init" $(pgrep -P "$init") <<'PY'
import sys
key = open(sys.argv[1], "rb").read()
hits = []
for pid in sys.argv[2:]:
    try:
        m, mem = open(f"/proc/{pid}/maps"), open(f"/proc/{pid}/mem", "rb", 0)
    except OSError:
        print("unreadable")
        sys.exit()
    with m, mem:
        for line in m:
            a, perm = line.split()[:2]
            if not perm.startswith("r"):
                continue
            lo, hi = (int(x, 16) for x in a.split("-"))
            # Read in pieces (overlapping by the key's length); a mapping
            # past 1 GiB is a sanitizer's shadow, reserved, not the run's
            # (reading it whole was a MemoryError under ASan).
            if hi - lo > 1 << 30:
                continue
            found, at, tail = False, lo, b""
            try:
                while at < hi and not found:
                    mem.seek(at)
                    piece = tail + mem.read(min(hi - at, 16 << 20))
                    found = key in piece
                    tail = piece[-(len(key) - 1):]
                    at += 16 << 20
            except OSError:
                pass
            if found:
                hits.append(pid)
                break
print(" ".join(hits) or "none")
PY
)
	kill "$sup" 2>/dev/null
	wait "$sup"
	unset CORDON_STATE_DIR
	[ "$found" != unreadable ] || { t_skip "the run's memory cannot be read here"; return; }
	expect_eq "$found" none "no process of the run holds the change-set key (init $init)"
	t_assert
}

# Outside review 6 F3: a path granted inside a kept change set (anyone's)
# bound it, and the run read what another run wrote. Neither a change set
# nor the key that seals them is ever granted; the key's directory is
# masked where a granted path holds it.
test_change_sets_and_their_key_never_granted() {
	ws_init || return
	cordon_run --workspace-mode review -- /bin/sh -c 'echo secret >out'
	local d kd=/var/lib/cordon
	d=$(changes_dir)
	mkdir "$WS/v" && cd "$WS/v" || return
	cordon_run --ro "$d/0/upper" -- cat "$d/0/upper/out"
	expect_match "$RC $OUT $ERR" "^[1-9][0-9]* .*inside a directory of change sets \(.*/.cordon-changes\)" "--ro inside a kept set"
	cordon_run --ro "$WS/.cordon-changes" -- true
	expect_match "$RC $ERR" "^[1-9].*inside a directory of change sets" "--ro of the directory of change sets"
	cd "$d/0/upper" || return
	cordon_run -- cat out
	expect_match "$RC $OUT $ERR" "^[1-9][0-9]* .*inside a directory of change sets" "a workspace inside a kept set"
	cd "$WS/v" || return
	if [ "$(id -u)" = 0 ] && [ -d $kd ]; then
		cordon_run --ro $kd -- true
		expect_match "$RC $ERR" "^[1-9].*in the directory of cordon's change-set key \($kd\)" "--ro of the key's directory"
		cordon_run --ro /var/lib -- /bin/sh -c "ls -A $kd | wc -l"
		expect_eq "$RC $OUT" "0 0" "the key's directory masked (empty, readable): $ERR"
		expect_match "$("$CORDON" explain --ro /var/lib)" "masked +$kd " "explain says so"
	fi
	"$CORDON" discard "$d" || fail "discard"
	# An ordinary user's key is theirs, as the run is: masked, not read.
	if setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null && [ "$(id -u)" = 0 ]; then
		chown -R 65534:65534 "$WS"
		chmod 777 "$T_TMP"
		cd "$WS/w" || return
		local nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --ro "$BUILD")
		"${nobody[@]}" --workspace-mode review -- /bin/sh -c 'echo u >u' >/dev/null 2>&1 || fail "the user's review run"
		expect_eq "$(stat -c '%u %a %s' "$XDG_STATE_HOME/cordon/changeset.key")" "65534 600 32" "the user's key made"
		expect_eq "$("${nobody[@]}" --ro "$XDG_STATE_HOME" -- /bin/sh -c "cat $XDG_STATE_HOME/cordon/changeset.key 2>/dev/null | wc -c" 2>&1)" \
			0 "the user's key masked in their run"
		expect_match "$("${nobody[@]}" --ro "$XDG_STATE_HOME/cordon" -- true 2>&1)" "change-set key" "nor granted"
	fi
	t_assert
}

# Outside review 7 F1, F2: an ordinary user's key reached through a link
# (a home named by a symbolic link) was neither masked nor refused, and a
# run with the key's place writable before the key existed could put one
# there that cordon then adopted. The key's directory is resolved; the key
# is made before any run that could write where it goes.
test_user_key_safe_through_links_and_first_use() {
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null || [ "$(id -u)" != 0 ]; then
		t_skip "needs root and unprivileged user namespaces (a workspace of uid 65534)"; return
	fi
	mkdir -p "$WS/home/proj" && ln -s home "$WS/homelink"
	chown -R 65534:65534 "$WS"
	chmod 777 "$T_TMP"
	cd "$WS/home/proj" || return
	local nobody=(env -u XDG_STATE_HOME HOME="$WS/homelink" setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON")
	local key="$WS/home/.local/state/cordon/changeset.key" out
	# First use, the key's place writable: made before the run starts.
	out=$("${nobody[@]}" run --ro "$BUILD" --workspace-mode direct --rw "$WS/home" -- /bin/sh -c \
		"ls -A $WS/home/.local/state/cordon | wc -l; cat $key 2>/dev/null | wc -c; echo x >$key" 2>&1)
	expect_match "$(echo $out)" "^0 0 /bin/sh: 1: cannot create $key: " "made first, masked: $out"
	expect_eq "$(stat -c '%u %a %s' "$key")" "65534 600 32" "the key is cordon's"
	local sum
	sum=$(sha256sum <"$key")
	# The home named by a link: the same key, masked, its grant refused.
	out=$("${nobody[@]}" run --ro "$BUILD" --workspace-mode direct --rw "$WS/home" -- /bin/sh -c \
		"cat $key 2>/dev/null | wc -c; mv $WS/home/.local $WS/home/moved 2>/dev/null || echo stays" 2>&1)
	expect_eq "$(echo $out)" "0 stays" "masked, and the directories above it stay: $out"
	expect_match "$("${nobody[@]}" run --ro "$BUILD" --ro "$WS/homelink/.local/state/cordon" -- true 2>&1)" \
		"change-set key|symbolic link" "a grant of it by a link refused"
	expect_eq "$(sha256sum <"$key")" "$sum" "the key unchanged"
	# Sealed and opened under it, through the link too.
	"${nobody[@]}" run --ro "$BUILD" --workspace-mode review -- /bin/sh -c 'echo u >u' >/dev/null 2>&1 || fail "review run"
	local d
	d=$(ls -d "$WS"/home/.cordon-changes-65534/*)
	"${nobody[@]}" apply "$d" || fail "apply"
	expect_eq "$(cat u)" u "applied"
	t_assert
}

# Outside review 7: `--include-protected` applied what a run wrote at the
# key's directory or in a directory of change sets; and `cordon apply ID`
# from inside .cordon-changes applied, then failed to remove the change set
# (no parent in its name) and left a journal.
test_always_held_and_apply_by_id() {
	ws_init || return
	review_run 'mkdir -p .cordon-changes-7/x && echo f >.cordon-changes-7/x/f; echo ok >ok'
	local d=$KEPT
	expect_eq "$RC" 0 "$ERR"
	cd "$WS/.cordon-changes" || return
	"$CORDON" apply --include-protected "$(basename "$d")" >"$T_TMP/o" 2>&1
	expect_match "$(cat "$T_TMP/o")" ".cordon-changes-7" "held back, named: $(cat "$T_TMP/o")"
	expect_eq "$(cat "$WS/w/ok")$([ -e "$WS/w/.cordon-changes-7" ] && echo applied)" ok "the rest applied, not the change-set directory"
	[ -e "$d/journal" ] && fail "a journal left"
	"$CORDON" discard "$(basename "$d")" || fail "discard by id"
	[ -e "$d" ] && fail "not removed"
	t_assert
}

# Outside review 8: a symbolic link on the way to the key's directory, in a
# path the run may write, let it point cordon at a key of its own; a
# directory on the way made unsearchable by one run hid the key from the
# next run's masks. Both refuse the run now (fail closed), saying why.
test_key_way_guarded() {
	mkdir -p "$WS/h/real" "$WS/w" && ln -s real "$WS/h/link" && cd "$WS/w" || return
	CORDON_STATE_DIR="$WS/h/link/state" "$CORDON" run --rw "$WS/h" -- true 2>"$T_TMP/e"
	expect_eq "$?" 125 "refused"
	expect_match "$(cat "$T_TMP/e")" "rw $WS/h holds $WS/h/link, a symbolic link on the way to the change-set key's directory" "says why"
	CORDON_STATE_DIR="$WS/h/link/state" "$CORDON" run --ro "$WS/h" -- true || fail "the same link read-only: runs"
	# No key to be had (a directory on its way another user's): overlay
	# falls back to direct, and says so on stderr.
	mkdir -p "$WS/other" && chown 1234 "$WS/other"
	CORDON_STATE_DIR="$WS/other/st" "$CORDON" run -- true 2>"$T_TMP/e" || fail "the fallback runs"
	expect_match "$(cat "$T_TMP/e")" "^cordon: warning: workspace mode .*$WS/other: owner uid 1234.*someone else could replace the change-set key" \
		"the fallback said: $(cat "$T_TMP/e")"
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null || [ "$(id -u)" != 0 ]; then
		t_assert
		return
	fi
	mkdir -p "$WS/u/home/proj" && chown -R 65534:65534 "$WS/u" && chmod 777 "$T_TMP"
	cd "$WS/u/home/proj" || return
	local nobody=(env -u XDG_STATE_HOME HOME="$WS/u/home" setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --ro "$BUILD")
	"${nobody[@]}" --workspace-mode review -- true >/dev/null 2>&1 || fail "review run"
	[ -f "$WS/u/home/.local/state/cordon/changeset.key" ] || fail "no key made"
	# (A home: its dot-entries are read-only unless unprotected; .local is,
	# for the pins on the key's way to be what is tested.)
	"${nobody[@]}" --workspace-mode direct --rw "$WS/u/home" --unprotect .local -- chmod 000 "$WS/u/home/.local" 2>&1 || fail "chmod run"
	expect_eq "$(stat -c %a "$WS/u/home/.local")" 700 "the run's chmod of a pinned directory put back"
	# The mode changed all the same (while a run was alive, by another
	# way): the next run that would see there is refused.
	chmod 000 "$WS/u/home/.local"
	local out
	out=$("${nobody[@]}" --workspace-mode direct --rw "$WS/u/home" -- cat "$WS/u/home/.local/state/cordon/changeset.key" 2>&1)
	expect_match "$? $out" "^125 .*the way to the change-set key's directory .* stops at $WS/u/home/.local \(Permission denied\)" "refused, fail closed"
	chmod 755 "$WS/u/home/.local"
	out=$("${nobody[@]}" --workspace-mode direct --rw "$WS/u/home" -- /bin/sh -c "cat $WS/u/home/.local/state/cordon/changeset.key 2>/dev/null | wc -c" 2>&1)
	expect_eq "$out" 0 "the mode restored: the key masked again"
	t_assert
}

# Outside review 8 F3, F4: a directory of kept change sets below a path the
# run sees, listed beside the key, is pinned above where writable, and a
# run that makes a directory above it unsearchable gets the next run
# refused (before: the set was unmasked, read, moved, and dropped from the
# list for good). The list is NUL-framed (a name with a newline) and only
# canonical entries count.
test_listed_change_sets_fail_closed() {
	local nl=$'n\nl'
	mkdir -p "$WS/$nl/ws" "$WS/v" && cd "$WS/$nl/ws" || return
	review_run 'echo s >s'
	local d=$KEPT
	cd "$WS/v" || return
	cordon_run --ro "$WS" -- /bin/sh -c "ls -A '$WS/$nl/.cordon-changes' | wc -l"
	expect_eq "$RC $OUT" "0 0" "a directory named with a newline: listed and masked: $ERR"
	"$CORDON" discard "$d" || fail "discard"
	# A malformed list: its entries are skipped, runs go on.
	mkdir -p "$WS/st" && chmod 700 "$WS/st"
	CORDON_STATE_DIR="$WS/st" cordon_run -- true
	mkdir -p "$WS/q/.cordon-changes" "$WS/q/a0"
	printf '%s\0relative\0' "$WS/q/a0/../.cordon-changes" >>"$WS/st/sets"
	CORDON_STATE_DIR="$WS/st" cordon_run --ro "$WS" -- true
	expect_eq "$RC" 0 "a malformed list does not stop runs: $ERR"
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null || [ "$(id -u)" != 0 ]; then
		t_assert
		return
	fi
	mkdir -p "$WS/u/home" "$WS/u/w/sub/ws" && chown -R 65534:65534 "$WS/u" && chmod 777 "$T_TMP"
	local nobody=(env -u XDG_STATE_HOME HOME="$WS/u/home" setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --ro "$BUILD")
	cd "$WS/u/w/sub/ws" || return
	"${nobody[@]}" --workspace-mode review -- /bin/sh -c 'echo secret >s' >/dev/null 2>&1 || fail "review run"
	cd "$WS/u/w" || return
	local out
	out=$("${nobody[@]}" --workspace-mode direct -- /bin/sh -c 'mv sub sub9 2>/dev/null || echo stays; chmod 000 sub' 2>&1)
	expect_eq "$out $(stat -c %a sub)" "stays 755" "the directory above a listed set is pinned, its mode put back"
	chmod 000 sub
	out=$("${nobody[@]}" --workspace-mode direct -- /bin/sh -c 'chmod 755 sub; cat sub/.cordon-changes-65534/*/*/upper/s' 2>&1)
	expect_match "$? $out" "^125 .*sub/.cordon-changes-65534, a directory of kept change sets, cannot be looked at \(Permission denied\)" "refused, fail closed"
	# Another set listed meanwhile: the unsearchable one stays listed.
	mkdir -p "$WS/u/o/ws" && chown -R 65534:65534 "$WS/u/o"
	(cd "$WS/u/o/ws" && "${nobody[@]}" --workspace-mode review -- true >/dev/null 2>&1) || fail "another review"
	expect_eq "$(tr '\0' '\n' <"$WS/u/home/.local/state/cordon/sets" | grep -c "^$WS/u/w/sub/")" 1 "still listed"
	chmod 755 "$WS/u/w/sub"
	out=$("${nobody[@]}" --workspace-mode direct -- /bin/sh -c 'cat sub/.cordon-changes-65534/*/*/upper/s 2>/dev/null | wc -l' 2>&1)
	expect_eq "$out" 0 "masked again"
	t_assert
}

# Outside review 9 F2: the apply carried a run's `chmod 0777 .git` to the
# host (any local user could then put hooks in), and F1: such a mode on a
# directory on the way to the key turned the list of kept change sets off,
# silently. The apply never adds group or other write; a key directory
# that cannot be used refuses every run.
test_apply_adds_no_group_or_other_write() {
	ws_init || return
	mkdir .git && chmod 755 .git && echo old >shared && chmod 666 shared
	cordon_run -- /bin/sh -c 'chmod 777 .git d; mkdir n && chmod 777 n; echo x >f && chmod 666 f; echo new >shared; chmod 777 k'
	expect_eq "$RC" 0 "$ERR"
	expect_eq "$(stat -c '%n %a' .git d n f shared k | tr '\n' ' ')" ".git 755 d 755 n 755 f 644 shared 666 k 755 " \
		"no group or other write the host did not have"
	# Nor through an ACL (a named entry, rwx, and its mask): the mode says it all.
	local acl='import os, struct
open("a", "w").write("x")
e = [(1, 6, 0xffffffff), (2, 7, os.getuid()), (4, 4, 0xffffffff), (0x10, 7, 0xffffffff), (0x20, 4, 0xffffffff)]
os.setxattr("a", "system.posix_acl_access", struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))
print(len(os.getxattr("a", "system.posix_acl_access")))'
	cordon_run -- python3 -c "$acl"
	expect_eq "$RC $OUT" "0 44" "the run set an ACL: $ERR"
	expect_eq "$(python3 -c 'import os
try:
    os.getxattr("a", "system.posix_acl_access"); print("acl")
except OSError as e: print(e.errno)') $(stat -c %a a)" "61 654" "no ACL applied (the mask the run set is its group bits, less write)"
	t_assert
}

test_unusable_key_refuses_every_run() {
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null || [ "$(id -u)" != 0 ]; then
		t_skip "needs root and unprivileged user namespaces (a workspace of uid 65534)"; return
	fi
	mkdir -p "$WS/u/home" "$WS/u/p/q/ws" "$WS/u/z" && chown -R 65534:65534 "$WS/u" && chmod 777 "$T_TMP"
	local nobody=(env -u XDG_STATE_HOME HOME="$WS/u/home" setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --ro "$BUILD")
	(cd "$WS/u/p/q/ws" && "${nobody[@]}" --workspace-mode review -- /bin/sh -c 'echo TOP >s' >/dev/null 2>&1) || fail "review"
	cd "$WS/u/z" || return
	"${nobody[@]}" --workspace-mode direct --rw "$WS/u/home" --unprotect .local -- chmod 777 "$WS/u/home/.local/state" || fail "chmod run"
	expect_eq "$(stat -c %a "$WS/u/home/.local/state")" 700 "the run's chmod put back"
	chmod 777 "$WS/u/home/.local/state"
	local out
	out=$("${nobody[@]}" --rw "$WS/u/p" -- /bin/sh -c "cat $WS/u/p/q/.cordon-changes-65534/*/0/upper/s" 2>&1)
	expect_match "$? $out" "^125 .*$WS/u/home/.local/state: owner uid 65534, mode 0777.*cannot be masked without it" \
		"a run that would not even see the key's directory is refused"
	chmod 755 "$WS/u/home/.local/state"
	out=$("${nobody[@]}" --rw "$WS/u/p" -- /bin/sh -c "cat $WS/u/p/q/.cordon-changes-65534/*/0/upper/s 2>/dev/null | wc -l" 2>&1)
	expect_eq "$out" 0 "the mode restored: runs again, the set masked"
	t_assert
}

# Outside review 9 F4: a tree deeper than the walk's 256 levels in a change
# set could not be discarded, and the discard removed meta first: a set
# cordon could no longer open or remove.
test_deep_change_set_discarded() {
	ws_init || return
	review_run 'p=.; for i in $(seq 300); do p=$p/d; done; mkdir -p $p && echo deep >$p/f'
	local d=$KEPT
	expect_eq "$RC" 0 "$ERR"
	"$CORDON" discard "$d" || fail "discard: $("$CORDON" discard "$d" 2>&1)"
	[ -e "$d" ] && fail "left: $(ls -A "$d" | head -3)"
	t_assert
}

# Outside review attack15: the fast removal of a change set that holds no
# change (rm_layer_fast) named "0/work/work": a link put at 0/work (by a
# concurrent run of the same user that reaches the set: one started before
# .cordon-changes was made next to its workspace, which no mask covers) was
# followed, and an empty directory "work" outside the set removed (by name,
# "0/host" too where 0 itself is swapped). The walk removes the link alone.
test_discard_follows_no_link_in_a_layer() {
	ws_init || return
	review_run 'true'
	local d=$KEPT
	expect_eq "$RC:$(field .changes.state)" "0:kept" "a review run that changed nothing: kept ($ERR)"
	mkdir -p "$WS/victim/work" && echo v >"$WS/victim/host"
	rmdir "$d/0/work/work" && rmdir "$d/0/work" && ln -s "$WS/victim" "$d/0/work" ||
		{ fail "the layer's work directory not replaced"; t_assert; return; }
	"$CORDON" discard "$d" || fail "discard: $("$CORDON" discard "$d" 2>&1)"
	[ -e "$d" ] && fail "left: $(ls -A "$d" | head -3)"
	expect_eq "$(cd "$WS/victim" && ls -A | tr '\n' ' ')" "host work " "nothing outside the change set removed"
	t_assert
}

# Outside review 9 F2, direct mode: the directories pinned above protected
# names are the host's own, writable: a run's chmod 0777 .git reached the
# host at once. Their mode is put back after the run, and said.
test_direct_pins_restored() {
	ws_init || return
	mkdir -p .git/hooks && chmod 755 .git
	cordon_run --workspace-mode direct -- /bin/sh -c 'chmod 777 .git'
	expect_eq "$RC $(stat -c %a .git)" "0 755" "put back: $ERR"
	expect_match "$(jq -c '.root_restored' "$R")" '"path":"\.git".*mode 0777 -> 0755' "said"
	# A default ACL (other: rwx) on it, and on the workspace: every file
	# made there later would be anyone's to write. Removed, and said.
	cordon_run --workspace-mode direct -- python3 -c 'import os, struct
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, 7, 0xffffffff) for t in (1, 4, 0x20))
for d in (".git", "."):
    os.setxattr(d, "system.posix_acl_default", acl)'
	expect_eq "$RC" 0 "$ERR"
	expect_eq "$(python3 -c 'import os
for d in (".git", "."):
    try:
        os.getxattr(d, "system.posix_acl_default"); print("acl")
    except OSError as e: print(e.errno)' | tr '\n' ' ')" "61 61 " "removed"
	expect_match "$(jq -c '.root_restored' "$R")" '"path":"\.git".*default ACL removed' "said"
	# Outside review 11 F3: directories the run made above protected
	# names that were absent (.cargo of .cargo/config.toml) get no group
	# or other write either: anyone could have put a config there.
	cordon_run --workspace-mode direct -- /bin/sh -c 'mkdir -m 0777 .cargo .aws .config; chmod 0777 .cargo .aws .config'
	expect_eq "$RC $(stat -c %a .cargo .aws .config | tr '\n' ' ')" "0 755 755 755 " "tightened: $ERR"
	expect_match "$(jq -c '.root_restored' "$R")" '"path":"\.cargo","what":"mode 0777 -> 0755"' "said"
	t_assert
}

# Outside review 10 F1: the directory of change sets was removed when it
# went empty and made anew for the next run, so it appeared while other
# runs were alive, unmasked in their view: a concurrent run read and
# altered a change set there. It stays once made: a run that starts later
# has it masked, whatever is made in it meanwhile.
test_change_sets_made_during_a_run_stay_masked() {
	ws_init || return
	cordon_run -- true
	expect_eq "$(ls -A "$WS/.cordon-changes" | wc -l)" 0 "it stays, empty: $ERR"
	mkdir "$WS/sync" && mkfifo "$WS/sync/go"
	cd "$WS" || return
	"$CORDON" run --workspace-mode direct -- /bin/sh -c "touch sync/ready; read x <sync/go; ls -A .cordon-changes | wc -l" \
		>"$T_TMP/out" 2>"$T_TMP/err" &
	local pid=$! i=0
	# (Until the run ends: one that failed at its start is not waited for.)
	while [ ! -e "$WS/sync/ready" ] && kill -0 $pid 2>/dev/null && [ $i -lt 6000 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	cd "$WS/w" || return
	cordon_run --workspace-mode review -- /bin/sh -c 'echo s >s'
	expect_eq "$(ls -A "$WS/.cordon-changes" | wc -l)" 1 "a change set made while the other run is alive: $ERR"
	kill -0 $pid 2>/dev/null && echo go >"$WS/sync/go"
	wait $pid
	expect_eq "$(cat "$T_TMP/out")" 0 "not in that run's view: $(cat "$T_TMP/err")"
	t_assert
}

# Outside review 11 F1: a run that started while another had loosened
# .git took that as its baseline, and put 0777 back after the other's sweep
# had put it right. The sweep never puts write or an ACL back.
test_concurrent_direct_runs_leave_pins_tight() {
	ws_init || return
	mkdir -p .git/hooks sync && chmod 755 .git && mkfifo sync/ago sync/bgo
	wait_for() { local i=0; while [ ! -e "$1" ] && kill -0 "$2" 2>/dev/null && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done; }
	"$CORDON" run --workspace-mode direct -- /bin/sh -c 'chmod 777 .git; touch sync/a; read x <sync/ago' >/dev/null 2>&1 &
	local a=$!
	wait_for sync/a $a
	"$CORDON" run --workspace-mode direct -- /bin/sh -c 'touch sync/b; read x <sync/bgo' >/dev/null 2>&1 &
	local b=$!
	wait_for sync/b $b
	kill -0 $a 2>/dev/null && echo go >sync/ago
	wait $a
	kill -0 $b 2>/dev/null && echo go >sync/bgo
	wait $b
	expect_eq "$(stat -c %a .git)" 755 "as before either run"
	t_assert
}

# Issue 28, `cordon changes` friction: apply in part, a default ignore list
# (a host `git status` after the run no longer refuses the apply), --diff
# that git apply takes, and `cordon apply` saying what it applied.
test_apply_in_part() {
	ws_init || return
	echo two >k2 && chmod 644 k2
	cordon_run --workspace-mode review -- /bin/sh -c "$EDITS; echo mod2 >>k2; mkdir -p n/s; echo 1 >n/s/one; echo 2 >n/two"
	expect_eq "$RC" 0 "run: $ERR"
	local d out before
	d=$(changes_dir)
	before=$(host_state)
	# A pattern that selects nothing, or only inside a deleted directory:
	# refused, nothing applied.
	out=$("$CORDON" apply "$d" n/s nothere 2>&1)
	expect_eq "$?" 2 "a pattern that selects nothing: $out"
	expect_match "$out" "nothere: no change at or below it" "named"
	out=$("$CORDON" apply "$d" d/f 2>&1)
	expect_eq "$?" 2 "below a deleted directory: $out"
	expect_eq "$(host_state)" "$before" "nothing applied"
	# A path below a new directory: the directory is made, the rest stays.
	out=$("$CORDON" apply "$d" n/s)
	expect_eq "$?" 0 "apply n/s: $out"
	expect_eq "$out" "created n/s/one
1 applied, 0 held back, 0 ignored, 10 left" "says what it applied"
	expect_eq "$(cat n/s/one) $([ -e n/two ] && echo two)" "1 " "only n/s"
	expect_match "$("$CORDON" changes "$d")" "created +2 .* n/two" "the rest is listed"
	"$CORDON" changes "$d" | grep -q n/s/one && fail "what was applied is listed still"
	# Two applies that each replace a host file (each keeps a backup).
	"$CORDON" apply -q "$d" k >"$T_TMP/q" || fail "apply k"
	expect_eq "$(cat "$T_TMP/q")" "" "-q says nothing"
	out=$("$CORDON" apply "$d" ./k2 2>&1)
	expect_eq "$?" 0 "a second apply replacing a host file: $out"
	expect_eq "$(tail -1 k) $(tail -1 k2)" "mod mod2" "both applied"
	# A glob (within one component): the rename r -> r2 is a delete and a
	# create; a deleted directory goes whole.
	out=$("$CORDON" apply --json "$d" 'r*' d)
	expect_eq "$?" 0 "apply 'r*' d: $out"
	expect_eq "$(echo "$out" | jq -r '[.applied[] | "\(.change) \(.path)"] | sort | join(",")')" \
		"created d/g,created r2,deleted d/f,deleted r" "--json: what was applied"
	expect_eq "$(echo "$out" | jq -r '"\(.left) \(.kept) \(.error)"')" "4 true null" "--json: left, kept"
	# The rest, whole: the change set goes.
	out=$("$CORDON" apply "$d")
	expect_eq "$?" 0 "the rest: $out"
	expect_eq "$(echo "$out" | sort | tr '\n' ,)" \
		"4 applied, 0 held back, 0 ignored, 0 left,created L,created b,created n/two,deleted a," "the rest said"
	[ -e "$d" ] && fail "applied whole: removed"
	expect_eq "$(host_state | grep -v '^./[kn]\|^mod')" "$(echo "$AFTER" | grep -v '^./k\|^mod')" "as one apply would"
	t_assert
}

test_ignore_list_and_a_host_git_status() {
	command -v git >/dev/null || { t_skip "no git"; return; }
	ws_init || return
	git init -q . && git add -A && git -c user.email=t@t -c user.name=t commit -qm init || fail "git"
	cordon_run --workspace-mode review -- /bin/sh -c 'echo edit >>k; git status >/dev/null;
		mkdir -p __pycache__ sub/__pycache__ .pytest_cache/v; echo c >__pycache__/m.pyc; echo c >sub/__pycache__/s.pyc;
		echo c >x.pyc; echo c >.pytest_cache/v/f'
	expect_eq "$RC" 0 "run: $ERR"
	local d out t0
	d=$(changes_dir)
	expect_match "$("$CORDON" changes "$d")" "modified .* \.git/index" "the run's git rewrote its index: applied while the host's is as it was"
	# The host's git refreshes its index after the run.
	t0=$(stat -c %Z .git/index)
	sleep 1.1
	touch a && git status >/dev/null
	[ "$(stat -c %Z .git/index)" != "$t0" ] || fail "the host's git status did not rewrite .git/index"
	out=$("$CORDON" changes "$d")
	expect_eq "$(echo "$out" | sed 's/^modified .* k$/modified k/')" "modified k
(5 ignored: the default ignore list, cordon changes --all lists them)" "the ignore list: not listed, counted"
	expect_eq "$("$CORDON" changes "$d" --json | jq -c '[.ignored, [.changes[].path]]')" '[5,["k"]]' "--json"
	expect_match "$("$CORDON" changes "$d" --all)" "modified .* \.git/index" "--all lists it"
	out=$("$CORDON" apply "$d" 2>&1)
	expect_eq "$?" 0 "applied after a host git status: $out"
	expect_match "$out" "1 applied, 0 held back, 5 ignored, 0 left" "said"
	expect_eq "$(tail -1 k) $(ls -d __pycache__ sub x.pyc .pytest_cache 2>/dev/null | tr '\n' ' ')" "edit " "the edit, none of the ignored"
	expect_eq "$(git status --short)" " M k" "the host's git sees the edit"
	[ -e "$d" ] && fail "only the ignored left: the change set is removed"
	# --no-ignore applies them; an overlay run leaves them out.
	cordon_run --workspace-mode review -- /bin/sh -c 'mkdir __pycache__; echo c >__pycache__/m.pyc'
	d=$(changes_dir)
	"$CORDON" apply --no-ignore -q "$d" || fail "--no-ignore"
	expect_eq "$(cat __pycache__/m.pyc)" c "--no-ignore applied it"
	cordon_run --workspace-mode overlay -- /bin/sh -c 'echo c >y.pyc; echo o >o'
	expect_eq "$RC $(field .changes.state) $(cat o) $([ -e y.pyc ] && echo y.pyc)" "0 applied o " "overlay: left out: $ERR"
	expect_eq "$(ls -A "$WS/.cordon-changes")" "" "and gone with the change set"
	t_assert
}

test_diff_taken_by_git_apply() {
	command -v git >/dev/null || { t_skip "no git"; return; }
	ws_init || return
	cp -a "$WS/w" "$WS/copy"
	cordon_run --workspace-mode review -- /bin/sh -c 'echo new >b; mkdir -p n/s; echo deep >n/s/f; echo mod >>k; rm a; rm -r d'
	expect_eq "$RC" 0 "run: $ERR"
	local d diff
	d=$(changes_dir)
	diff=$("$CORDON" changes "$d" --diff)
	[[ "$diff" == *$'--- /dev/null\n+++ b/b\n'* ]] || fail "created: from /dev/null: $diff"
	[[ "$diff" == *$'--- a/a\n+++ /dev/null\n'* ]] || fail "deleted: to /dev/null: $diff"
	[[ "$diff" == *$'--- a/d/f\n+++ /dev/null\n'* ]] || fail "a deleted directory: each file: $diff"
	(cd "$WS/copy" && printf '%s\n' "$diff" | git apply) || fail "git apply: $diff"
	"$CORDON" apply -q "$d" || fail "apply"
	# (git apply leaves the emptied directory d.)
	rmdir "$WS/copy/d" 2>/dev/null
	expect_eq "$(diff -r "$WS/copy" "$WS/w" && echo same)" same "the diff made the run's changes"
	t_assert
}

for t in test_overlay_host_sees_nothing_until_the_end test_review_changes_apply_discard \
	test_apply_refused_when_the_host_changed test_interrupted_apply_completed_or_rolled_back test_completed_apply_not_undone_by_a_later_discard \
	test_concurrent_runs_have_their_own_change_sets test_special_files_and_setid_refused test_on_failure \
	test_fallback_needs_allow_weaker test_overlay_is_the_default test_squatted_change_set_dir_said test_rw_file_makes_the_run_direct test_late_refusal_has_no_change_set test_overlay_paths_beyond_bounds_kept test_apply_steps_bounded test_workspace_below_a_private_directory test_evidence_in_review_mode test_explain_shows_the_mode test_non_root_overlay \
	test_end_of_run_apply_keeps_host_changes test_changes_output_is_safe test_diff_dies_with_changes test_journal_names_never_read_as_records \
	test_kept_change_set_out_of_a_later_runs_reach_root test_kept_change_set_out_of_a_later_runs_reach_user \
	test_kept_change_set_deeper_in_a_later_run \
	test_change_set_control_files_checked test_meta_names_the_run_uid test_kept_change_sets_masked \
	test_forged_change_set_refused test_change_sets_and_their_key_never_granted test_change_set_key_not_in_the_runs_memory \
	test_user_key_safe_through_links_and_first_use test_always_held_and_apply_by_id \
	test_key_way_guarded test_listed_change_sets_fail_closed \
	test_apply_adds_no_group_or_other_write test_unusable_key_refuses_every_run test_deep_change_set_discarded test_discard_follows_no_link_in_a_layer test_direct_pins_restored \
	test_change_sets_made_during_a_run_stay_masked test_concurrent_direct_runs_leave_pins_tight \
	test_apply_in_part test_ignore_list_and_a_host_git_status test_diff_taken_by_git_apply \
	test_changes_diff_of_created_and_deleted_files test_changes_listing_past_a_deep_tree; do
	t_run $t
done
