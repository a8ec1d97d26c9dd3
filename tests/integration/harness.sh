# What an agent harness needs (issues 11 and 12): host character devices
# (--dev, filesystem.devices), each verb's --help, the man page; the task
# check is untrusted code with a place of its own; the workspace, the report
# target and explain behave the way a harness that makes a workspace per
# task expects.
. "$(dirname "$0")/../lib.sh"
# The task check over a change set needs an overlay workspace: on a host
# whose /tmp has no idmapped mounts (Debian 12's tmpfs), on /var/tmp.
overlay_workspaces '^test_(review_check_sees_the_change_set|overlay_check_decides_the_apply|pytest_check_is_clean_in_a_git_workspace|check_sees_a_workspace_nested_in_a_write_path|check_sees_a_nested_workspace_made_anew|check_does_not_see_what_the_apply_leaves_out)$' only

skip() { t_skip "$*"; }
is_root() { [ "$(id -u)" = 0 ]; }
# The tests that run cordon as uid 65534: root to become it, and user
# namespaces it may make; else skipped, saying which is missing.
ordinary_user_or_skip() {
	is_root || { skip "needs root to become an ordinary user"; return; }
	setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null ||
		skip "unprivileged user namespaces are disabled"
}

# --- host devices, each verb's --help, the man page --------------------------

# /dev/fuse, when the host has it, appears in the run as itself (the host's
# permissions still apply: opening it is the kernel's and the mode's call).
test_dev_fuse_exposed() {
	if [ ! -c /dev/fuse ]; then
		t_skip "no /dev/fuse on this host"
		return
	fi
	cordon_run --dev /dev/fuse -- /bin/sh -c 'stat -c "%F %t:%T" /dev/fuse'
	expect_eq "$OUT" "$(stat -c '%F %t:%T' /dev/fuse)" "the host's /dev/fuse in the run"
	expect_eq "$(field .status)" ok "status"
	echo '{"filesystem": {"devices": ["/dev/fuse"]}}' >p.json
	cordon_run --policy p.json -- /bin/sh -c 'test -c /dev/fuse && echo there'
	expect_eq "$OUT" there "policy filesystem.devices"
	cordon_run -- /bin/sh -c 'test -e /dev/fuse && echo there || echo absent'
	expect_eq "$OUT" absent "not without asking"
	# Bound as --rw it used to fail with an idmapped-mount error: now a
	# clear reason naming --dev.
	cordon_run --rw /dev/fuse -- true
	expect_eq "$(field .status)" setup-error "--rw of a device"
	expect_match "$ERR" "rw /dev/fuse is a device: expose it with --dev /dev/fuse" "reason"
	expect_match "$("$CORDON" explain --dev /dev/fuse)" "dev +/dev/fuse" "explain lists it"
	"$CORDON" explain --json --dev /dev/fuse >"$T_TMP/e.json"
	expect_eq "$(jq -c .devices "$T_TMP/e.json")" '["/dev/fuse"]' "explain --json"
	/usr/bin/python3 "$TOP/tests/validate.py" "$TOP/schemas/explain.schema.json" "$T_TMP/e.json" >/dev/null ||
		fail "explain --json with a device does not validate"
	echo '{"filesystem": {"devices": ["/dev/fuse"]}}' >"$T_TMP/pd.json"
	/usr/bin/python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
		"$TOP/schemas/policy.schema.json" "$T_TMP/pd.json" || fail "policy schema refuses filesystem.devices"
	t_assert
}

# A device the run can really use: a node of the kernel's null device made
# for this test (0666), written and read in the run with no denial recorded
# by the observer and nothing refused by Landlock.
test_dev_usable_and_not_a_denial() {
	if [ "$(id -u)" != 0 ]; then
		t_skip "making a test device node needs root"
		return
	fi
	local node=/dev/cordon-test-null-$$
	mknod -m 0666 "$node" c 1 3 || { t_skip "mknod refused"; return; }
	cordon_run --dev "$node" -- /bin/sh -c "echo x >$node && cat $node && echo used"
	rm -f "$node"
	expect_eq "$OUT" used "written and read in the run"
	expect_eq "$(field '.denials | length')" 0 "no denials: $(field -c .denials)"
	t_assert
}

test_dev_refusals() {
	# Raw memory and I/O ports are refused by name, present or not.
	for d in /dev/mem /dev/kmem /dev/port /dev/mapper/control; do
		cordon_run --dev $d -- /bin/sh -c 'echo started'
		expect_eq "$RC" 125 "$d: exit code"
		expect_eq "$OUT" "" "$d: not started"
		expect_match "$ERR" "^cordon: --dev: device $d: refused: " "$d: reason"
	done
	echo '{"filesystem": {"devices": ["/dev/mem"]}}' >p.json
	"$CORDON" validate p.json 2>"$T_TMP/e" && fail "validate accepted /dev/mem"
	expect_match "$(cat "$T_TMP/e")" 'p.json:1:[0-9]+: "filesystem.devices": device /dev/mem: refused' "validate: file:line:col"
	# ... and by number: another name for /dev/mem (1:1) is refused too.
	if [ "$(id -u)" = 0 ] && mknod -m 0600 /dev/cordon-test-mem-$$ c 1 1 2>/dev/null; then
		cordon_run --dev /dev/cordon-test-mem-$$ -- /bin/sh -c 'echo started'
		rm -f /dev/cordon-test-mem-$$
		expect_eq "$OUT" "" "alias of /dev/mem: not started"
		expect_match "$ERR" "refused: raw access" "alias of /dev/mem: reason"
	else
		echo "skip: cannot make a test node for 1:1"
	fi
	cordon_run --dev dev/fuse -- true
	expect_match "$ERR" "absolute path under /dev" "relative"
	cordon_run --dev /dev/shm -- true
	expect_match "$ERR" "device /dev/shm: not a character device" "a directory"
	# A block device, whichever the host has.
	local blk
	blk=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -1)
	if [ -z "$blk" ]; then
		echo "skip: no block device on this host"
	else
		cordon_run --dev "$blk" -- /bin/sh -c 'echo started'
		expect_eq "$(field .status)" setup-error "$blk: status"
		expect_eq "$OUT" "" "$blk: not started"
		expect_match "$ERR" "device $blk: refused: a block device" "$blk: reason"
		cordon_run --dev /dev/../dev/null --dev /dev/null -- true
		expect_eq "$(field .status)" ok "a standard node again is harmless"
	fi
	t_assert
}

# The operator's ceiling bounds devices like paths.
test_dev_ceiling() {
	local dev=/dev/fuse
	[ -c $dev ] || dev=/dev/null
	cat >"$T_TMP/c.json" <<J
{"filesystem": {"read": ["$BUILD"], "write": ["$WS"], "devices": ["$dev"]}}
J
	cordon_run --ceiling "$T_TMP/c.json" --dev $dev -- /bin/sh -c 'echo started'
	expect_eq "$OUT" started "a device the ceiling lists"
	expect_eq "$(field -c '[.grants[]? | select(.kind=="device") | [.target, .allowed]]')" "[[\"$dev\",true]]" "granted"
	cat >"$T_TMP/c2.json" <<J
{"filesystem": {"read": ["$BUILD"], "write": ["$WS"]}}
J
	cordon_run --ceiling "$T_TMP/c2.json" --dev $dev -- /bin/sh -c 'echo started'
	expect_eq "$(field .status)" unauthorized "a ceiling without devices allows none"
	expect_eq "$OUT" "" "not started"
	expect_match "$ERR" "^cordon: unauthorized: device $dev: not under any filesystem.devices prefix of the ceiling \(none\)" "reason"
	expect_match "$("$CORDON" explain --ceiling "$T_TMP/c2.json" --dev $dev)" "REFUSED +device +$dev" "explain agrees"
	t_assert
}

# Issue 12.8: each verb's --help prints that verb's usage on stdout, exit 0,
# and runs nothing.
test_verb_help() {
	local v out rc
	for v in run explain ledger validate serve; do
		for h in --help -h; do
			out=$("$CORDON" $v $h 2>"$T_TMP/e"); rc=$?
			expect_eq "$rc" 0 "cordon $v $h: exit code"
			expect_match "$(printf '%s' "$out" | head -1)" "^usage: cordon $v " "cordon $v $h: usage"
			expect_eq "$(cat "$T_TMP/e")" "" "cordon $v $h: stderr"
		done
	done
	out=$("$CORDON" run --net x.test:443 --help -- /bin/sh -c 'echo started')
	expect_match "$out" "--dev PATH" "run --help after options lists --dev"
	expect_nomatch "$out" started "nothing ran"
	out=$("$CORDON" help explain)
	expect_match "$out" "^usage: cordon explain" "cordon help VERB"
	cordon_run -- /bin/sh -c 'echo "$@"' sh --help
	expect_eq "$OUT" "--help" "the command's own --help is the command's"
	t_assert
}

# The manual pages, generated at build time from man/*.1.scd (scdoc) into
# BUILD/man: cordon(1) and cordon-run(1) render without a warning, and
# cordon-run(1) and docs/run.md name every option `cordon run --help` lists.
test_man_page() {
	if ! command -v groff >/dev/null || ! command -v man >/dev/null; then
		t_skip "groff or man missing"
		return
	fi
	if [ ! -f "$BUILD/man/cordon-run.1" ]; then
		t_skip "no generated man pages in $BUILD/man (built elsewhere)"
		return
	fi
	local page o
	for page in "$BUILD/man/cordon.1" "$BUILD/man/cordon-run.1"; do
		groff -ww -man -z "$page" 2>"$T_TMP/e"
		expect_eq "$(cat "$T_TMP/e")" "" "groff -ww warnings of $page"
		MANWIDTH=80 man --warnings -l "$page" >"$T_TMP/out" 2>"$T_TMP/e"
		expect_eq "$(cat "$T_TMP/e")" "" "man --warnings of $page"
	done
	expect_match "$(MANWIDTH=80 man -l "$BUILD/man/cordon.1" 2>/dev/null | head -1)" "^cordon\(1\)" "cordon(1) rendered"
	MANWIDTH=200 man -l "$BUILD/man/cordon-run.1" 2>/dev/null | col -b >"$T_TMP/run.txt"
	expect_match "$(head -1 "$T_TMP/run.txt")" "^cordon-run\(1\)" "cordon-run(1) rendered"
	for o in $("$CORDON" run --help | grep -oE -- '--[a-z-]+' | sort -u); do
		grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$T_TMP/run.txt" || fail "cordon-run(1) lacks $o"
		grep -qF -- "\`$o" "$TOP/docs/run.md" || fail "docs/run.md lacks $o"
	done
	t_assert
}

# make demo leaves nothing behind (issue 28): its workspace and the change
# sets beside it go when it ends.
test_demo_leaves_nothing() {
	mkdir "$T_TMP/tmpdir"
	OUT=$(TMPDIR=$T_TMP/tmpdir BUILD=$BUILD sh "$TOP/examples/demo.sh" 2>&1)
	expect_eq "$?" 0 "make demo: $(printf '%s' "$OUT" | tail -3)"
	expect_match "$OUT" "out/result.txt = 9" "the demo's run"
	local ws
	ws=$(printf '%s\n' "$OUT" | sed -n 's/.*(workspace: \(.*\))$/\1/p' | head -1)
	[ -n "$ws" ] && [ ! -e "$ws" ] || fail "the demo's workspace '$ws' is still there"
	expect_eq "$(ls -A "$T_TMP/tmpdir")" "" "what make demo left in TMPDIR"
	t_assert
}

# A man page per verb (issue 30.3): every verb `cordon --help` lists has
# one in BUILD/man, `make install DESTDIR=...` installs each in man1, man
# renders each without a warning, and `man cordon-VERB` finds it by MANPATH;
# the same for cordon-oci(1), the OCI runtime's page.
test_man_page_per_verb() {
	if ! command -v groff >/dev/null || ! command -v man >/dev/null; then
		t_skip "groff or man missing"
		return
	fi
	if [ ! -f "$BUILD/build.ninja" ] || ! command -v meson >/dev/null; then
		t_skip "no meson build tree at $BUILD (make install needs one)"
		return
	fi
	local verbs v page man1
	verbs=$("$CORDON" --help | grep -oE '(cordon|\|) [a-z][a-z-]*' | awk '{print $2}' | grep -vx help | sort -u)
	expect_match "$(printf '%s ' $verbs)" "^apply changes discard explain ledger mcp run serve validate " "the verbs cordon --help lists"
	make -s -C "$TOP" install BUILD="$BUILD" DESTDIR="$T_TMP/inst" >"$T_TMP/inst.log" 2>&1 ||
		fail "make install: $(tail -3 "$T_TMP/inst.log")"
	man1=$(dirname "$(find "$T_TMP/inst" -path '*/man1/cordon.1' | head -1)")
	[ -f "$man1/cordon.1" ] || fail "make install installs no cordon.1 in a man1"
	# cordon(1), a page per verb, and cordon-oci(1): the other program's
	for page in cordon $(printf 'cordon-%s ' $verbs) cordon-oci; do
		[ -f "$TOP/man/$page.1.scd" ] || fail "no source man/$page.1.scd"
		[ -f "$BUILD/man/$page.1" ] || fail "$page.1 not built in $BUILD/man"
		[ -f "$man1/$page.1" ] || { fail "$page.1 not installed in man1"; continue; }
		cmp -s "$BUILD/man/$page.1" "$man1/$page.1" || fail "the installed $page.1 is not the built one"
		MANWIDTH=80 man --warnings -l "$man1/$page.1" >"$T_TMP/out" 2>"$T_TMP/e"
		expect_eq "$(cat "$T_TMP/e")" "" "man --warnings of $page.1"
		expect_match "$(head -1 "$T_TMP/out")" "^$page\(1\)" "$page.1 rendered"
		expect_match "$(MANPATH=${man1%/man1} man -w "$page" 2>&1)" "/man1/$page\.1" "man finds $page after make install"
	done
	[ -x "$(find "$T_TMP/inst" -path '*/bin/cordon' | head -1)" ] || fail "make install installs the program"
	t_assert
}

# The documentation's links (issue 30.3): every relative link and #anchor
# in README.md, SECURITY.md, NEWS.md and docs/ resolves
# (scripts/check-links.py); and the checker finds a broken one.
test_doc_links() {
	if ! command -v python3 >/dev/null; then
		t_skip "python3 missing"
		return
	fi
	python3 "$TOP/scripts/check-links.py" "$TOP" >"$T_TMP/links" 2>&1
	expect_eq "$?" 0 "broken links: $(head -5 "$T_TMP/links")"
	mkdir -p "$T_TMP/tree/docs"
	printf '# A\n\n## Sub part\n\n[ok](#sub-part) [ok](b.md#b) `[code](nowhere.md)`\n' >"$T_TMP/tree/docs/a.md"
	printf '# B\n\n[bad](a.md#nope) [bad](../missing.md)\n' >"$T_TMP/tree/docs/b.md"
	printf '# T\n\n[ok](docs/a.md#a)\n' >"$T_TMP/tree/README.md"
	OUT=$(python3 "$TOP/scripts/check-links.py" "$T_TMP/tree" 2>/dev/null)
	expect_eq "$?" 1 "the checker's exit code on broken links"
	expect_eq "$OUT" "docs/b.md:3: a.md#nope: no heading with that anchor in docs/a.md
docs/b.md:3: ../missing.md: no such file or directory" "what the checker says"
	t_assert
}

for t in test_verb_help test_man_page test_dev_fuse_exposed test_dev_usable_and_not_a_denial test_dev_refusals test_dev_ceiling test_demo_leaves_nothing test_man_page_per_verb test_doc_links; do
	t_run $t
done

# --- the task check ---------------------------------------------------------

test_check_denials_are_reported_and_count() {
	# The check is untrusted code too: its denials are in the report, marked
	# as the check's, and they decide containment like any other.
	cordon_run --check 'unshare -U true 2>/dev/null; exit 0' -- /bin/true
	expect_eq "$(field .status)" ok "status"
	expect_eq "$(field .verdicts.task)" pass "task verdict"
	expect_eq "$(field .verdicts.containment)" violations "containment counts the check's denial"
	expect_eq "$(field -c '[.denials[] | select(.phase == "check") | .target]')" '["unshare(CLONE_NEWUSER)"]' "the check's denial"
	expect_eq "$(field -c '[.denials[] | select(.phase == "run")]')" '[]' "none of the command's"
	t_assert
}

test_check_runs_in_a_0700_workspace() {
	# The way every harness makes a workspace: mktemp -d, mode 0700.
	local ws
	ws=$(mktemp -d "$T_TMP/ws.XXXXXX")
	chmod 700 "$ws"
	cd "$ws" || return 1
	cordon_run --check 'test "$(cat answer.txt)" = 42' -- /bin/sh -c 'echo 42 >answer.txt'
	expect_eq "$(field .status)" ok "status"
	expect_eq "$(field .check.status)" ok "the check ran"
	expect_eq "$(field .verdicts.task)" pass "task verdict"
	t_assert
}

test_check_setup_failure_is_error_with_reason() {
	# A check that cannot be set up says nothing about the task: verdict
	# "error", the reason in the report and on stderr.
	echo '{"check": {"command": "true", "cwd": "/no/such/dir"}}' >p.json
	cordon_run --policy p.json -- /bin/true
	expect_eq "$(field .status)" ok "the command's status"
	expect_eq "$RC" 0 "exit status follows the command"
	expect_eq "$(field .verdicts.task)" error "task verdict"
	expect_eq "$(field .check.status)" setup-error "check status"
	expect_match "$(field .check.reason)" "/no/such/dir" "the check's reason"
	expect_match "$ERR" "check: setup-error: .*/no/such/dir" "stderr says it"
	t_assert
}

test_check_object_parse_errors_have_locations() {
	local f
	for f in '{"check": {"command": "true", "fils": "x"}}|1:31|unknown key "fils"' \
		 '{"check": {"files": "x"}}|1:11|"command" is required' \
		 '{"check": {"command": 1}}|1:23|"check.command" must be a string' \
		 '{"check": {"command": "t", "cwd": "rel"}}|1:35|"check.cwd" must be an absolute path' \
		 '{"check": {"command": "t", "env": {"1X": "v"}}}|1:36|"1X" is not a valid variable name' \
		 '{"check": ["true"]}|1:11|"check" must be a string or an object'; do
		printf '%s\n' "${f%%|*}" >p.json
		local rest=${f#*|}
		"$CORDON" validate p.json >/dev/null 2>err.txt && fail "accepted: ${f%%|*}"
		expect_match "$(cat err.txt)" "^cordon: p.json:${rest%%|*}: .*${rest#*|}" "error for ${f%%|*}"
	done
	t_assert
}

# A wrong answer, a test that catches it, and a planted unittest.py that
# "passes" whatever it is asked.
plant_wrong_answer() {
	mkdir -p "$T_TMP/checks"
	cat >"$T_TMP/checks/test_answer.py" <<'PY'
import os, unittest
class T(unittest.TestCase):
    def test_answer(self):
        with open(os.environ["ANSWER"]) as f:
            self.assertEqual(f.read().strip(), "42")
PY
	printf '%s\n' 'import sys' 'print("planted unittest: all good")' 'sys.exit(0)' >"$T_TMP/plant.py"
}

test_planted_module_cannot_decide_the_check() {
	[ -x /usr/bin/python3 ] || { t_skip "no /usr/bin/python3"; return; }
	plant_wrong_answer
	# The run reads the planted module from a granted read-only path, which
	# keeps its owner and mode (mktemp -d made it 0700, root's).
	chmod 755 "$T_TMP"
	local task="echo 41 >answer.txt; cp $T_TMP/plant.py unittest.py"
	# The residual risk, shown: the check imports from the workspace.
	cordon_run --ro "$T_TMP" --env ANSWER="$WS/answer.txt" \
		--check "/usr/bin/python3 -m unittest discover -s $T_TMP/checks" -- /bin/sh -c "$task"
	expect_eq "$(field .verdicts.task)" pass "unsafe pattern: the planted module decides ($ERR $(field -c .check))"
	# The documented patterns: -P (no working directory on sys.path), the
	# check's files in a place the task cannot touch, run from there.
	cat >p.json <<J
{"check": {"command": "/usr/bin/python3 -P -m unittest discover -s \\"\$CORDON_CHECK_DIR\\"",
	   "files": "$T_TMP/checks", "env": {"ANSWER": "$WS/answer.txt"}}}
J
	cordon_run --policy p.json --ro "$T_TMP/plant.py" -- /bin/sh -c "$task"
	expect_eq "$(field .verdicts.task)" fail "-P: the planted module is not imported"
	expect_match "$ERR" "check: .*AssertionError: '41' != '42'" "the real test ran"
	cat >p.json <<J
{"check": {"command": "/usr/bin/python3 -I -m unittest discover -s .", "cwd": "/check",
	   "files": "$T_TMP/checks", "env": {"ANSWER": "$WS/answer.txt"}}}
J
	cordon_run --policy p.json --ro "$T_TMP/plant.py" -- /bin/sh -c "$task"
	expect_eq "$(field .verdicts.task)" fail "-I with cwd /check"
	# And the right answer passes the same check.
	cordon_run --policy p.json --ro "$T_TMP/plant.py" -- /bin/sh -c "echo 42 >answer.txt; cp $T_TMP/plant.py unittest.py"
	expect_eq "$(field .verdicts.task)" pass "right answer"
	t_assert
}

test_check_files_must_be_outside_writable_paths() {
	mkdir -p checks
	echo '{"check": {"command": "true", "files": "./checks"}}' >p.json
	cordon_run --policy p.json -- /bin/true
	expect_eq "$(field .status)" setup-error "status"
	expect_match "$(field .reason)" "check.files .*overlaps the writable path" "reason"
	mkdir -p "$T_TMP/c"
	echo "{\"check\": {\"command\": \"true\", \"files\": \"$T_TMP/c\"}}" >p.json
	cordon_run --policy p.json --rw "$T_TMP/c" -- /bin/true
	expect_eq "$(field .status)" setup-error "status with --rw of the files"
	t_assert
}

test_check_cannot_be_fooled_by_links_into_its_view() {
	# The check's files sit at a fresh random directory of its view, named by
	# CORDON_CHECK_DIR (its default cwd); a link the task left that leads
	# there, into /proc (/proc/self/cwd is the check's cwd) or to the
	# standard streams makes the task verdict "error": the check does not run.
	mkdir -p "$T_TMP/c" ws
	echo 42 >"$T_TMP/c/expected.txt"
	cat >"$T_TMP/c/t.sh" <<'SH'
case $CORDON_CHECK_DIR in /check-[0-9a-f]*) ;; *) echo "bad dir $CORDON_CHECK_DIR"; exit 3 ;; esac
[ ${#CORDON_CHECK_DIR} = 39 ] && [ "$(pwd)" = "$CORDON_CHECK_DIR" ] || { echo "bad cwd $(pwd)"; exit 3; }
test "$(cat "$ANSWER")" = "$(cat expected.txt)"
SH
	cat >p.json <<J
{"cwd": "./ws", "filesystem": {"write": ["./ws"]},
 "check": {"command": "sh \$CORDON_CHECK_DIR/t.sh", "files": "$T_TMP/c", "env": {"ANSWER": "$WS/ws/answer.txt"}}}
J
	cordon_run --policy p.json -- /bin/sh -c 'echo 41 >answer.txt'
	expect_eq "$(field .verdicts.task)/$(field .check.exit_code)" fail/1 "an honest wrong answer ($ERR)"
	cordon_run --policy p.json -- /bin/sh -c 'echo 42 >answer.txt'
	expect_eq "$(field .verdicts.task)" pass "the right answer ($ERR)"
	local l
	for l in /check/expected.txt /proc/self/cwd/expected.txt ../../../../../proc/self/cwd/expected.txt \
		/dev/stdin /dev/../proc/1/cwd/expected.txt /check-0123456789abcdef0123456789abcdef/x; do
		rm -rf ws && mkdir ws
		cordon_run --policy p.json -- /bin/sh -c "ln -s $l answer.txt"
		expect_eq "$(field .verdicts.task)/$(field .check.status)" error/setup-error "link to $l ($ERR)"
		expect_match "$(field .check.reason)" "symbolic link $WS/ws/answer.txt -> $l, which leads into" "the reason names the link"
	done
	# A link further down, made through a directory link, is found as well.
	rm -rf ws && mkdir ws
	cordon_run --policy p.json -- /bin/sh -c 'mkdir -p d/e && ln -s /proc/self d/e/p && ln -s d/e/p/cwd/expected.txt answer.txt'
	expect_eq "$(field .verdicts.task)" error "a link through a directory link ($ERR)"
	expect_match "$(field .check.reason)" "ws/d/e/p -> /proc/self" "the reason names the directory link"
	# A link inside the workspace is fine.
	rm -rf ws && mkdir ws
	cordon_run --policy p.json -- /bin/sh -c 'echo 42 >real && ln -s real answer.txt'
	expect_eq "$(field .verdicts.task)" pass "a link to a file of the task ($ERR)"
	t_assert
}

test_check_files_beside_the_policy_with_cwd_in_a_declared_path() {
	# The README's set-up: the run writes only ./ws (its cwd), the check's
	# files beside the policy are outside it. explain and run agree.
	mkdir -p tests ws
	echo 'exit 0' >tests/t.sh
	echo '{"cwd": "./ws", "filesystem": {"write": ["./ws"]}, "check": {"command": "sh $CORDON_CHECK_DIR/t.sh", "files": "./tests"}}' >p.json
	local v
	v=$("$CORDON" explain --policy p.json -- /bin/true | grep '^verdict')
	expect_eq "$v" "verdict: would run" "explain"
	cordon_run --policy p.json -- /bin/true
	expect_eq "$(field .status)/$(field .verdicts.task)" ok/pass "run ($(field .check.reason))"
	# With the start directory writable (no declared cwd) the same files are refused, by both.
	echo '{"check": {"command": "true", "files": "./tests"}}' >p.json
	v=$("$CORDON" explain --policy p.json -- /bin/true | grep '^verdict')
	expect_match "$v" "check.files .*overlaps the writable path $WS" "explain refuses"
	cordon_run --policy p.json -- /bin/true
	expect_match "$(field .reason)" "check.files .*overlaps the writable path $WS" "run refuses"
	t_assert
}

test_check_files_are_checked_against_the_ceiling() {
	mkdir -p "$T_TMP/c" "$T_TMP/ok"
	echo "{\"filesystem\": {\"read\": [\"$BUILD\", \"$T_TMP/ok\"], \"write\": [\"$WS\"]}}" >"$T_TMP/ceiling.json"
	echo "{\"check\": {\"command\": \"true\", \"files\": \"$T_TMP/c\"}}" >p.json
	cordon_run --ceiling "$T_TMP/ceiling.json" --policy p.json -- /bin/true
	expect_eq "$(field .status)" unauthorized "check.files beyond the ceiling"
	expect_match "$(field -c .grants)" "\"kind\":\"read\",\"target\":\"$T_TMP/c\",\"allowed\":false" "the grant"
	echo "{\"check\": {\"command\": \"test -d \$CORDON_CHECK_DIR\", \"files\": \"$T_TMP/ok\"}}" >p.json
	cordon_run --ceiling "$T_TMP/ceiling.json" --policy p.json -- /bin/true
	expect_eq "$(field .status)/$(field .verdicts.task)" ok/pass "check.files inside the ceiling"
	t_assert
}

# --- the workspace (issue 12, items 1 and 2) ---------------------------------

test_workspace_follows_the_declared_one() {
	mkdir ws
	echo '{"cwd": "./ws", "filesystem": {"write": ["./ws"]}}' >p.json
	local before
	before=$(cat p.json)
	cordon_run --policy p.json -- /bin/sh -c 'pwd; echo x >out.txt; echo overwritten >../p.json 2>/dev/null; true'
	expect_eq "$(field .status)" ok "status"
	expect_eq "$OUT" "$WS/ws" "working directory"
	expect_eq "$(cat p.json)" "$before" "the policy file beside the workspace is untouched"
	expect_eq "$(field -c '[.outputs[].path]')" '["out.txt"]' "outputs, relative to the workspace"
	local rw
	rw=$("$CORDON" explain --json --policy p.json | jq -c '[.paths[] | select(.mode == "rw") | .path]')
	expect_eq "$rw" "[\"$WS/ws\"]" "explain: only the declared workspace is writable"
	# Flags declare it the same way.
	"$CORDON" run --cwd "$WS/ws" --rw "$WS/ws" -- /bin/sh -c 'echo x >../flag.txt' 2>/dev/null
	[ -e flag.txt ] && fail "the current directory stayed writable with --cwd/--rw"
	t_assert
}

test_no_implicit_workspace_in_system_or_home_roots() {
	local d
	for d in /etc /usr /root /home /var; do
		[ -d "$d" ] || continue
		(cd "$d" && "$CORDON" run --report "$T_TMP/r.json" -- /bin/true) 2>err.txt
		expect_eq "$?" 125 "exit status in $d"
		expect_match "$(cat err.txt)" "current directory $d is .*cd into a project directory, or grant it explicitly with --rw $d" "message in $d"
		expect_eq "$(jq -r .status "$T_TMP/r.json")" setup-error "status in $d"
	done
	# A home directory itself; below it is fine, and so is an explicit grant.
	mkdir -p home/proj
	(cd home && HOME=$WS/home "$CORDON" run -- /bin/true) 2>err.txt && fail "ran in \$HOME"
	expect_match "$(cat err.txt)" "is a home directory" "home message"
	(cd home/proj && HOME=$WS/home "$CORDON" run -- /bin/true) || fail "below the home directory"
	(cd home && HOME=$WS/home "$CORDON" run --rw "$WS/home" -- /bin/true) || fail "explicit --rw of the home directory"
	t_assert
}

# Below the system trees too (review atk2 #8): a root run in /usr/local/bin
# would leave a root-owned executable on the host. A home directory named
# through a link is still the home directory.
test_no_implicit_workspace_below_system_directories() {
	local d
	for d in /usr/local/bin /etc/default /root/.cache /run/lock /tmp /var/tmp /opt; do
		[ -d "$d" ] || continue
		(cd "$d" && "$CORDON" run -- /bin/sh -c 'echo planted >cordon-planted-probe') 2>err.txt
		expect_eq "$?" 125 "exit status in $d"
		[ -e "$d/cordon-planted-probe" ] && { rm -f "$d/cordon-planted-probe"; fail "wrote into $d"; }
		expect_match "$(cat err.txt)" "current directory $d is a (system|home) directory" "message in $d"
		(cd "$d" && "$CORDON" explain -- /bin/true) | grep -q "would run" && fail "explain in $d: would run"
	done
	mkdir realhome
	ln -s "$WS/realhome" homelink
	(cd realhome && HOME=$WS/homelink "$CORDON" run -- /bin/true) 2>err.txt && fail "ran in \$HOME named by a link"
	expect_match "$(cat err.txt)" "is a home directory" "home through a link"
	t_assert
}

# --- explain agrees with run (issue 12, item 6) --------------------------------

test_explain_agrees_with_run_for_an_ordinary_user() {
	ordinary_user_or_skip || return
	chmod 777 "$WS"
	local as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
	local erc=0 rrc=0
	$as_user "$CORDON" explain --json --memory-limit 64M -- /bin/true >e.json || erc=$?
	$as_user "$CORDON" run --report "$WS/r.json" --memory-limit 64M -- /bin/true 2>err.txt || rrc=$?
	local verdict status
	verdict=$(jq -r .verdict e.json)
	status=$(jq -r .status r.json)
	if [ "$status" = ok ]; then
		expect_eq "$verdict" "would run" "the run ran"
		expect_eq "$erc" 0 "explain's exit status"
	else
		expect_eq "$status" setup-error "run status"
		expect_match "$verdict" "^setup-error: .*cgroup" "explain's verdict ($(cat err.txt))"
		expect_eq "$erc" 1 "explain's exit status when it would not run"
		expect_eq "$rrc" 125 "run's exit status"
	fi
	# Accepting per-process rlimits: both run.
	erc=0
	echo '{"enforcement": {"allow_weaker": ["cgroup"]}}' >w.json
	$as_user "$CORDON" explain --policy w.json --memory-limit 64M -- /bin/true >/dev/null || erc=$?
	expect_eq "$erc" 0 "explain with allow_weaker cgroup"
	$as_user "$CORDON" run --policy w.json --memory-limit 64M -- /bin/true || fail "run with allow_weaker cgroup"
	t_assert
}

# A run whose cgroup cannot be made (an ordinary user, no delegated
# hierarchy) with allow_weaker "cgroup" gets the per-process fallback:
# RLIMIT_AS for the memory limit, RLIMIT_NPROC for the pids limit. On v1 the
# cgroup was made after clone, and init, already cloned, kept the limits
# without the fallback: the run had neither (outside review attack20).
test_cgroup_fallback_reaches_the_run() {
	ordinary_user_or_skip || return
	chmod 777 "$WS"
	mkdir -p "$T_TMP/h"
	chmod 777 "$T_TMP/h"
	chmod 755 "$T_TMP"
	echo '{"enforcement": {"allow_weaker": ["cgroup"]}}' >"$T_TMP/w.json"
	chmod 644 "$T_TMP/w.json"
	local out
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$T_TMP/h" "$CORDON" run --policy "$T_TMP/w.json" \
		--workspace-mode direct --memory-limit 64M --pids-limit 5 -- sh -c 'grep -E "^Max (address space|processes)" /proc/self/limits' 2>&1)
	if [[ "$out" != *"Max processes"* ]]; then
		fail "the run: $out"
		t_assert
		return
	fi
	expect_match "$out" "Max processes +5 +5 " "the pids limit as RLIMIT_NPROC: $out"
	expect_match "$out" "Max address space +67108864 +67108864 " "the memory limit as RLIMIT_AS: $out"
	t_assert
}

test_check_runs_for_an_ordinary_user() {
	ordinary_user_or_skip || return
	chmod 777 "$WS"
	mkdir -p "$T_TMP/c"
	echo 'test "$(cat "$1")" = 42' >"$T_TMP/c/t.sh"
	chmod 755 "$T_TMP" "$T_TMP/c"
	chmod 644 "$T_TMP/c/t.sh"
	echo "{\"enforcement\": {\"allow_weaker\": [\"cgroup\"]},
	       \"check\": {\"command\": \"sh \$CORDON_CHECK_DIR/t.sh $WS/answer\", \"files\": \"$T_TMP/c\"}}" >p.json
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --policy p.json --report "$WS/r.json" \
		-- /bin/sh -c 'echo 42 >answer' 2>err.txt
	R=$WS/r.json
	keep_report "$R"
	expect_eq "$(field .status)" ok "status"
	expect_eq "$(field .check.status)" ok "the check ran ($(cat err.txt))"
	expect_eq "$(field .verdicts.task)" pass "task verdict"
	t_assert
}

# --- --ro below a 0700 directory (issue 12, item 3) --------------------------

test_ro_below_a_0700_directory() {
	is_root || { skip "needs root"; return; }
	local home=$T_TMP/home
	mkdir -p "$home/.pyenv/bin"
	chmod 700 "$home"
	echo 'tool 1.0' >"$home/.pyenv/bin/version"
	cordon_run --ro "$home/.pyenv" -- /bin/cat "$home/.pyenv/bin/version"
	expect_eq "$(field .status)" ok "status ($(field .reason))"
	expect_eq "$OUT" "tool 1.0" "read below a 0700 directory"
	cordon_run --ro "$home/.pyenv/missing" -- /bin/true
	expect_eq "$(field .status)" setup-error "a missing source"
	expect_match "$(field .reason)" "ro $home/.pyenv/missing.*No such file" "names the path and why"
	# A granted read-only path keeps its owners: root's 0600 file there
	# is not the run's to read (the run is never host root).
	echo 'root only' >"$home/.pyenv/secret"
	chmod 600 "$home/.pyenv/secret"
	cordon_run --ro "$home/.pyenv" -- /bin/cat "$home/.pyenv/secret"
	expect_eq "$(field .status)" exit-nonzero "root's 0600 file unreadable ($OUT)"
	expect_nomatch "$OUT" "root only" "its content"
	t_assert
}

# --- the report's target (issue 12, item 9) ----------------------------------

test_report_into_a_device_or_fifo_is_written_in_place() {
	is_root || { skip "needs root (mknod)"; return; }
	# In /dev: a /tmp mounted nodev (the VM's) would refuse to open it.
	local node=/dev/cordon-test-null-$$
	mknod "$node" c 1 3
	"$CORDON" run --report "$node" -- /bin/true || fail "run with --report to a device"
	[ -c "$node" ] || fail "the device was replaced: $(ls -l "$node")"
	rm -f "$node"
	# The FIFO's reader is there before cordon looks: held open here (read
	# and write: the open waits for nothing). A reader started in the
	# background may not have opened it yet (seen under emulation): cordon
	# then rightly finds none, and the reader waited for good.
	mkfifo "$T_TMP/fifo"
	exec 3<>"$T_TMP/fifo"
	"$CORDON" run --report "$T_TMP/fifo" -- /bin/true || fail "run with --report to a FIFO"
	if [ -p "$T_TMP/fifo" ]; then
		# What it wrote, to the end: a second reader, then the one writer
		# left (ours) gone.
		exec 4<"$T_TMP/fifo"
		exec 3>&-
		cat <&4 >"$T_TMP/from-fifo"
		exec 4<&-
	else
		exec 3>&-
		fail "the FIFO was replaced"
	fi
	expect_eq "$(jq -r .status "$T_TMP/from-fifo")" ok "the reader got the report"
	# /dev/stdout is a link into /proc: written through (appended after the
	# command's own output), the link stays. Tested on a link of our own.
	ln -s /proc/self/fd/1 "$T_TMP/stdout"
	"$CORDON" run --report "$T_TMP/stdout" -- /bin/echo hello >"$T_TMP/out.txt"
	[ -L "$T_TMP/stdout" ] || fail "the link to /proc/self/fd/1 was replaced"
	expect_eq "$(head -1 "$T_TMP/out.txt")" hello "the command's output comes first"
	expect_eq "$(tail -n +2 "$T_TMP/out.txt" | jq -r .status)" ok "then the report"
	# A regular file is still replaced atomically.
	echo old >"$T_TMP/r.json"
	"$CORDON" run --report "$T_TMP/r.json" -- /bin/true
	expect_eq "$(jq -r .status "$T_TMP/r.json")" ok "regular file"
	t_assert
}

test_report_through_a_planted_symlink_is_refused() {
	mkdir -p "$T_TMP/elsewhere"
	"$CORDON" run -- /bin/ln -s "$T_TMP/elsewhere" out >/dev/null 2>&1
	[ -L out ] || { fail "setup: no link"; t_assert; return; }
	"$CORDON" run --report out/r.json -- /bin/true 2>err.txt
	expect_eq "$?" 125 "exit status"
	[ -e "$T_TMP/elsewhere/r.json" ] && fail "the report followed the run's symlink"
	expect_match "$(cat err.txt)" "symbolic link inside the writable path" "message"
	t_assert
}

# --- the report's directory swapped by a concurrent run (review F2) -----------

# A run sharing the workspace exchanges sub with a link to a 0700 directory
# elsewhere: the report lands in sub or nowhere, never through the link (the
# directory is opened without links, the temp file and the rename are
# relative to it). The exchange is made at the two points a race would have
# to hit (tests/syscall_hook.py), not hoped for in 300 runs: just before the
# directory is opened (nothing written: the link is refused), and just before
# the rename into place (the report lands in the directory opened, now at
# sub.l).
test_report_dir_swapped_for_a_link_stays_put() {
	[ "$(uname -m)" = x86_64 ] || { t_skip "tests/syscall_hook.py knows x86_64's system call numbers only"; return; }
	mkdir -p "$T_TMP/victim"
	chmod 700 "$T_TMP/victim"
	local swap="python3 -c 'import ctypes; ctypes.CDLL(None).renameat2(-100, b\"$WS/sub\", -100, b\"$WS/sub.l\", 2)'"
	local at
	for at in "openat2 1 ^$WS/sub\$" "renameat 3 ^rep\.json\$"; do
		rm -rf sub sub.l
		mkdir sub && ln -s "$T_TMP/victim" sub.l
		set -- $at
		python3 "$TOP/tests/syscall_hook.py" "$1" "$2" "$3" "$swap" -- \
			"$CORDON" run --report "$WS/sub/rep.json" -- /bin/true 2>"$T_TMP/err"
		RC=$?
		expect_match "$(cat "$T_TMP/err")" "syscall_hook: ran at $1\\($WS/sub|rep\\.json\\)" "$1: swapped there"
		[ -L sub ] || fail "$1: sub is not the link now"
		expect_eq "$(ls -A "$T_TMP/victim")" "" "$1: nothing written through the link"
		case $1 in
		openat2) expect_eq "$RC" 125 "$1: the link refused ($(cat "$T_TMP/err"))" ;;
		renameat) expect_eq "$RC $(jq -r .status sub.l/rep.json 2>/dev/null)" "0 ok" "$1: the report in the directory opened" ;;
		esac
	done
	t_assert
}

# A run plants a directory at its own report's name: the directory is moved
# aside (and named on stderr), the report is written, the exit status is the
# command's.
test_a_planted_directory_does_not_suppress_the_report() {
	"$CORDON" run --report "$WS/rep.json" -- /bin/sh -c 'mkdir rep.json; echo x >rep.json/f; exit 0' 2>err.txt
	expect_eq "$?" 0 "exit status is the command's, not 125 ($(cat err.txt))"
	expect_eq "$(jq -r .status rep.json)" ok "the report was written"
	local aside
	aside=$(ls -d rep.json.planted.* 2>/dev/null)
	expect_eq "$(cat "$aside/f" 2>/dev/null)" x "the planted directory was moved aside"
	expect_match "$(cat err.txt)" "report: $WS/rep.json was not a file .*moved aside to $WS/rep.json.planted." "stderr says so"
	t_assert
}

# --- links on granted paths (review F3) ---------------------------------------

# An earlier run, in a workspace of its own, replaced sub with a link to a
# 0700 root directory; a later run granted a path below sub must not get that
# directory: the link is not in a system directory, so it is refused.
test_a_link_planted_by_an_earlier_run_is_not_followed() {
	local ws5=$T_TMP/ws5 victim=$T_TMP/rootonly
	mkdir -p "$ws5/sub/cache" "$victim/v2/cache"
	chmod 700 "$victim"
	echo 'root-only data' >"$victim/v2/cache/secret.txt"
	(cd "$ws5" && "$CORDON" run -- /bin/sh -c "rm -rf sub && ln -s $victim/v2 sub") >/dev/null 2>&1
	[ -L "$ws5/sub" ] || { fail "setup: the earlier run left no link"; t_assert; return; }
	local mode
	for mode in --rw --ro; do
		cordon_run $mode "$ws5/sub/cache" -- /bin/sh -c "cat $ws5/sub/cache/secret.txt; echo pwned >$ws5/sub/cache/planted"
		expect_eq "$(field .status)" setup-error "$mode through the planted link"
		expect_match "$(field .reason)" "$ws5/sub is a symbolic link in $ws5, which a run could have planted; name its target instead" "$mode: message"
		expect_nomatch "$OUT" "root-only" "$mode: the run read the root-only file"
	done
	[ -e "$victim/v2/cache/planted" ] && fail "the run wrote into the root-only directory"
	echo in >"$victim/v2/cache/in.txt"
	echo "{\"inputs\": [\"$ws5/sub/cache/in.txt\"]}" >"$T_TMP/in.json"
	cordon_run --policy "$T_TMP/in.json" -- /bin/true
	expect_eq "$(field .status)" setup-error "an input through the planted link"
	expect_match "$(field .reason)" "input $ws5/sub/cache/in.txt: $ws5/sub is a symbolic link in $ws5" "input: message"
	# A link in a system directory is still followed (/lib -> usr/lib on
	# merged-/usr hosts).
	if [ -L /lib ]; then
		cordon_run --ro /lib -- /bin/true
		expect_eq "$(field .status)" ok "--ro /lib ($(field .reason))"
	fi
	t_assert
}

# The workspace is the directory cordon was started in, not what its name
# leads to later (review F3, concurrent): here its name leads elsewhere from
# the start (a tmpfs mounted over it after the cd, in a mount namespace of
# the test's own), as a concurrent run swapping a component would make it.
test_workspace_is_the_directory_started_in() {
	is_root || { skip "needs root (mount)"; return; }
	unshare -m true 2>/dev/null || { skip "no mount namespaces"; return; }
	mkdir inner
	echo mine >inner/own.txt
	unshare -m --propagation private sh -c 'cd inner && mount -t tmpfs cordon-test "$PWD" &&
		exec "$1" run --report "$2" -- /bin/sh -c "echo x >out.txt; ls"' sh "$CORDON" "$T_TMP/r.json" >out.txt 2>err.txt
	expect_eq "$?" 125 "exit status ($(cat out.txt))"
	expect_eq "$(jq -r .status "$T_TMP/r.json")" setup-error "status"
	expect_match "$(cat err.txt)" "current directory $WS/inner is no longer reached by that name without links" "message"
	[ -e inner/out.txt ] && fail "wrote into the directory started in, refused or not"
	t_assert
}

for t in test_check_denials_are_reported_and_count test_check_runs_in_a_0700_workspace \
	test_check_setup_failure_is_error_with_reason test_check_object_parse_errors_have_locations \
	test_planted_module_cannot_decide_the_check test_check_files_must_be_outside_writable_paths \
	test_ro_below_a_0700_directory test_report_into_a_device_or_fifo_is_written_in_place \
	test_report_through_a_planted_symlink_is_refused test_workspace_follows_the_declared_one \
	test_no_implicit_workspace_in_system_or_home_roots test_explain_agrees_with_run_for_an_ordinary_user test_cgroup_fallback_reaches_the_run \
	test_check_files_are_checked_against_the_ceiling test_check_runs_for_an_ordinary_user \
	test_check_cannot_be_fooled_by_links_into_its_view \
	test_check_files_beside_the_policy_with_cwd_in_a_declared_path \
	test_report_dir_swapped_for_a_link_stays_put test_a_planted_directory_does_not_suppress_the_report \
	test_no_implicit_workspace_below_system_directories test_a_link_planted_by_an_earlier_run_is_not_followed \
	test_workspace_is_the_directory_started_in; do
	t_run $t
done

# --- issue 28.1: the check sees the run's result in every workspace mode ----

# A git repository with one failing test, which the run fixes (and a file it
# deletes): in review mode the check runs on the change set over the host
# tree, before anything is applied, and passes; the host stays as it was.
t28_repo() {
	/usr/bin/python3 -c 'import pytest' 2>/dev/null || return 1
	git init -q . && printf 'def add(a, b):\n    return a - b\n' >calc.py
	printf 'from calc import add\ndef test_a(): assert add(1, 1) == 2\ndef test_b(): pass\ndef test_c(): pass\n' >test_calc.py
	echo stale >stale.txt
	git add -A && git -c user.email=t@t -c user.name=t commit -qm init
}
T28_FIX="sed -i 's/a - b/a + b/' calc.py && rm stale.txt"
T28_CHECK='/usr/bin/python3 -B -m pytest -q -p no:cacheprovider && ! test -e stale.txt'

test_review_check_sees_the_change_set() {
	t28_repo || { skip "python3-pytest is not installed"; return; }
	cordon_run --workspace-mode review --check "$T28_CHECK" -- /bin/sh -c "$T28_FIX"
	expect_eq "$(field .status)" ok "status ($ERR)"
	expect_eq "$(field .enforcement.workspace_mode)" review "mode"
	expect_eq "$(field .verdicts.task)" pass "the check saw the fix ($ERR)"
	expect_match "$ERR" "check: .*3 passed" "pytest's own count"
	expect_eq "$(field .changes.state)" kept "review keeps the change set"
	grep -q 'a - b' calc.py || fail "review mode changed the host"
	[ -e stale.txt ] || fail "review mode deleted on the host"
	t_assert
}

# Overlay: the check runs before the apply; a failing check is a run that
# did not end ok for on_failure (keep, discard), and nothing is applied.
# The check's own writes are thrown away: nothing of them is applied.
test_overlay_check_decides_the_apply() {
	echo 1 >answer.txt
	cordon_run --workspace-mode overlay --on-failure keep --check 'test "$(cat answer.txt)" = 42' \
		-- /bin/sh -c 'echo 41 >answer.txt; echo x >made.txt'
	expect_eq "$(field .status)/$(field .verdicts.task)" ok/fail "a wrong answer ($ERR)"
	expect_eq "$(field .changes.state)" kept "on_failure keep: kept"
	expect_match "$(field .changes.reason)" "task check failed.*on_failure: keep" "the reason says why"
	expect_eq "$(cat answer.txt)" 1 "nothing applied"
	[ -e made.txt ] && fail "a new file was applied"
	local dir
	dir=$(field .changes.dir)
	[ -d "$dir" ] && "$CORDON" discard "$dir" >/dev/null 2>&1
	cordon_run --workspace-mode overlay --on-failure discard --check 'test "$(cat answer.txt)" = 42' \
		-- /bin/sh -c 'echo 41 >answer.txt'
	expect_eq "$(field .changes.state)" discarded "on_failure discard"
	expect_match "$(field .changes.reason)" "task check failed.*on_failure: discard" "the reason says why"
	expect_eq "$(cat answer.txt)" 1 "nothing applied"
	# The right answer: the check sees it before the apply, then it is applied;
	# what the check wrote (in its throwaway view, issue 28.2) is in neither.
	cordon_run --workspace-mode overlay --on-failure keep \
		--check 'test "$(cat answer.txt)" = 42; r=$?; echo 0 >answer.txt; echo y >bycheck.txt; exit $r' \
		-- /bin/sh -c 'echo 42 >answer.txt'
	expect_eq "$(field .verdicts.task)/$(field .changes.state)" pass/applied "the right answer ($ERR)"
	expect_nomatch "$ERR" "check: .*Read-only file system" "the check's writes succeed, thrown away"
	expect_eq "$(cat answer.txt)" 42 "applied, as the run left it"
	[ -e bycheck.txt ] && fail "the check's file was applied"
	t_assert
}

# Direct mode: the check reads the host workspace after the run, as before.
test_direct_check_unchanged() {
	cordon_run --workspace-mode direct --check 'test "$(cat answer.txt)" = 42' -- /bin/sh -c 'echo 42 >answer.txt'
	expect_eq "$(field .enforcement.workspace_mode)/$(field .verdicts.task)" direct/pass "direct ($ERR)"
	expect_eq "$(field .changes.state)" null "no change set"
	cordon_run --workspace-mode direct --on-failure keep --check 'test "$(cat answer.txt)" = 43' -- /bin/true
	expect_eq "$(field .verdicts.task)" fail "a wrong answer"
	expect_eq "$(cat answer.txt)" 42 "the host has the run's writes"
	t_assert
}

for t in test_review_check_sees_the_change_set test_overlay_check_decides_the_apply test_direct_check_unchanged; do
	t_run $t
done

# --- issue 27 item 10: a report never replaces a device ----------------------

# A character device at the report's path inside the workspace stays the
# device (not renamed over, not written): the report is kept beside it and
# stderr says where. A block device anywhere is never written to.
test_report_never_replaces_a_device() {
	is_root || { skip "needs root (mknod)"; return; }
	mknod "$WS/rep.json" c 1 3
	"$CORDON" run --report "$WS/rep.json" -- /bin/true 2>err.txt
	expect_eq "$?" 0 "exit status is the command's ($(cat err.txt))"
	[ -c "$WS/rep.json" ] || fail "the device inside the workspace was replaced: $(ls -l "$WS/rep.json")"
	expect_match "$(cat err.txt)" "report: $WS/rep.json is a character device inside a writable path, never replaced by the report: the report is at $WS/rep.json.tmp." "stderr says so"
	local kept
	kept=$(ls "$WS"/rep.json.tmp.* 2>/dev/null)
	expect_eq "$(jq -r .status "$kept" 2>/dev/null)" ok "the report was kept beside it"
	# Outside: a block device (a ram disk's number, absent or not) is
	# refused before it is opened; it stays.
	local node=/dev/cordon-test-blk-$$
	mknod "$node" b 1 250
	"$CORDON" run --report "$node" -- /bin/true 2>err2.txt
	expect_eq "$?" 125 "exit status for a block device"
	[ -b "$node" ] || fail "the block device was replaced: $(ls -l "$node")"
	expect_match "$(cat err2.txt)" "report $node is a block device: a report is never written to one" "message"
	rm -f "$node"
	t_assert
}

t_run test_report_never_replaces_a_device

# --- issue 27 item 6: the check's files are not the task's to read ------------

# read: [DATA] with check.files DATA/tests let the task copy the expected
# answer and pass. Refused by validate, and by the run's plan (links
# resolved; CLI grants and cordon's own read-only view included).
test_check_files_the_task_can_read_are_refused() {
	mkdir -p "$T_TMP/data/tests"
	echo 42 >"$T_TMP/data/tests/expected.txt"
	cat >p.json <<J
{"filesystem": {"read": ["$T_TMP/data"]},
 "check": {"command": "sh -c 'test \"\$(cat \$ANSWER)\" = \"\$(cat expected.txt)\"'", "files": "$T_TMP/data/tests", "env": {"ANSWER": "$WS/answer.txt"}}}
J
	"$CORDON" validate p.json >out.txt 2>err.txt
	expect_eq "$?" 2 "validate's exit status ($(cat out.txt))"
	expect_match "$(cat err.txt)" "\"check.files\" $T_TMP/data/tests overlaps the read grant $T_TMP/data: the task could read the check's hidden files" "validate's message"
	cordon_run --policy p.json -- /bin/sh -c "cat $T_TMP/data/tests/expected.txt >answer.txt"
	expect_eq "$(field .status)" setup-error "status"
	expect_nomatch "$(field .verdicts.task)" pass "task verdict"
	# The grant given on the command line (a link there is refused in any
	# case): the plan refuses it.
	cat >p.json <<J
{"check": {"command": "sh -c 'test \"\$(cat \$ANSWER)\" = \"\$(cat expected.txt)\"'", "files": "$T_TMP/data/tests", "env": {"ANSWER": "$WS/answer.txt"}}}
J
	"$CORDON" validate p.json >/dev/null || fail "validate without the grant"
	cordon_run --policy p.json --ro "$T_TMP/data/" -- /bin/sh -c "cat $T_TMP/data/tests/expected.txt >answer.txt"
	expect_eq "$(field .status)" setup-error "status with --ro"
	expect_match "$(field .reason)" "check.files $T_TMP/data/tests overlaps the read grant $T_TMP/data, which the task can read" "reason"
	expect_nomatch "$(field .verdicts.task)" pass "task verdict with --ro"
	[ -e answer.txt ] && fail "the task ran"
	"$CORDON" explain --policy p.json --ro "$T_TMP/data" -- /bin/true >out.txt 2>&1 && fail "explain accepted it"
	expect_match "$(cat out.txt)" "overlaps the read grant" "explain's message"
	# cordon's own read-only view (/usr, /etc, ...) is read by every run.
	echo '{"check": {"command": "true", "files": "/usr/share"}}' >p.json
	"$CORDON" validate p.json >/dev/null 2>err.txt && fail "validate accepted /usr/share"
	expect_match "$(cat err.txt)" "overlaps /usr, which every run reads" "validate's message for /usr"
	t_assert
}

t_run test_check_files_the_task_can_read_are_refused

# --- issue 28.2: the check's workspace is writable and thrown away -----------

# The main use case: `python3 -m pytest -q` as the check, in a git workspace.
# pytest writes __pycache__/ and .pytest_cache/ there; in the check's
# throwaway view those writes succeed and vanish: no denial, containment
# clean, in every workspace mode. (With the scratch reverted: violations.)
t28s_repo() {
	/usr/bin/python3 -c 'import pytest' 2>/dev/null || return 1
	git init -q . && printf 'def add(a, b):\n    return a + b\n' >calc.py
	printf 'from calc import add\ndef test_a(): assert add(1, 1) == 2\n' >test_calc.py
	echo tracked >tracked.txt
	git add -A && git -c user.email=t@t -c user.name=t commit -qm init
}

test_pytest_check_is_clean_in_a_git_workspace() {
	t28s_repo || { skip "python3-pytest is not installed"; return; }
	local mode
	for mode in direct overlay review; do
		cordon_run --workspace-mode "$mode" --check '/usr/bin/python3 -m pytest -q' -- /bin/true
		expect_eq "$(field .enforcement.workspace_mode)" "$mode" "mode"
		expect_eq "$(field .verdicts.task)" pass "$mode: the check passed ($ERR)"
		expect_eq "$(field .verdicts.containment)" clean "$mode: pytest's caches are no violation ($(field -c .denials))"
		expect_eq "$(field .check.workspace)" scratch "$mode: the check's workspace"
		expect_match "$ERR" "check: 1 passed" "$mode: pytest's own count"
		expect_nomatch "$ERR" "PytestCacheWarning|Read-only" "$mode: pytest could write its cache"
		[ -e __pycache__ ] || [ -e .pytest_cache ] && fail "$mode: the check's caches reached the host"
		expect_eq "$(git status --porcelain)" "" "$mode: the repository is as it was"
		local dir
		dir=$(field .changes.dir)
		[ "$dir" != null ] && [ -d "$dir" ] && "$CORDON" discard "$dir" >/dev/null 2>&1
	done
	t_assert
}

# The check writes a file, makes __pycache__, changes and deletes tracked
# files, makes and removes directories: it sees its own writes, and nothing
# of them reaches the host or the change set (the host and the change set
# are as the task left them). A check that fills the scratch gets ENOSPC,
# not a denial. Writes outside the workspace (another path the task could
# write) stay refused and reported.
T28S_CHECK='set -e; test "$(cat answer.txt)" = 42; echo c >bycheck.txt; test "$(cat bycheck.txt)" = c
echo changed >tracked.txt; rm gone.txt; mkdir -p d/e; echo x >d/e/f; rm -r sub
/usr/bin/python3 -c "import sys; sys.path.insert(0, \".\"); import mod" && test -d __pycache__
! test -e gone.txt; ! test -e sub
if dd if=/dev/zero of=big bs=1M count=64 2>/tmp/dd.err; then exit 3; fi; grep -q "No space left" /tmp/dd.err; rm big
! echo o >"$1/bycheck" 2>/dev/null'
test_check_writes_vanish() {
	mkdir -p "$T_TMP/other" sub
	echo keep >"$T_TMP/other/x"
	echo tracked >tracked.txt
	echo gone >gone.txt
	echo s >sub/s
	echo 'x = 1' >mod.py
	local mode dir
	for mode in direct overlay review; do
		cordon_run --workspace-mode "$mode" --memory-limit 64M --rw "$T_TMP/other" \
			--check "sh -c '$T28S_CHECK' check $T_TMP/other" -- /bin/sh -c "echo 42 >answer.txt; echo run >$T_TMP/other/byrun"
		[ "$(field .status)" = setup-error ] && { skip "no cgroup for --memory-limit: $(field .reason)"; return; }
		expect_eq "$(field .verdicts.task)" pass "$mode: the check saw its own writes ($ERR)"
		expect_eq "$(field .check.workspace)" scratch "$mode: the check's workspace"
		expect_eq "$(field -c '[.denials[] | select(.phase == "check") | .target]')" "[\"$T_TMP/other/bycheck\"]" \
			"$mode: only the write outside the workspace is a denial"
		expect_eq "$(field .verdicts.containment)" violations "$mode: which counts"
		for f in bycheck.txt d __pycache__ big "$T_TMP/other/bycheck"; do
			[ -e "$f" ] && fail "$mode: the check's $f reached the host"
		done
		expect_eq "$(cat tracked.txt)/$(cat gone.txt)/$(cat sub/s)" tracked/gone/s "$mode: the check's changes and deletions did not"
		if [ "$mode" = review ]; then
			dir=$(field .changes.dir)
			expect_eq "$(find "$dir"/*/upper -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')" "answer.txt byrun " \
				"review: the change set holds the task's writes alone"
			[ -e answer.txt ] && fail "review: applied"
			"$CORDON" discard "$dir" >/dev/null 2>&1
		else
			expect_eq "$(cat answer.txt)" 42 "$mode: the task's write is there"
			expect_eq "$(cat "$T_TMP/other/byrun")" run "$mode: the task's other write is there"
		fi
		rm -f answer.txt "$T_TMP/other/byrun"
	done
	t_assert
}

# An ordinary user gets the same throwaway view (overlay on a tmpfs in the
# run's user namespace).
test_check_scratch_for_an_ordinary_user() {
	ordinary_user_or_skip || return
	mkdir p && echo tracked >p/tracked.txt && chown -R 65534:65534 . && cd p || return 1
	echo '{"enforcement": {"allow_weaker": ["cgroup"]}}' >"$WS/w.json"
	local mode
	for mode in direct overlay; do
		setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --workspace-mode "$mode" \
			--policy "$WS/w.json" --report "$WS/r.json" \
			--check 'echo c >bycheck.txt && rm tracked.txt && mkdir -p __pycache__/x && test -s "$(ls -d __pycache__)/../bycheck.txt"' \
			-- /bin/sh -c 'echo 42 >answer.txt' 2>"$WS/err.txt"
		R=$WS/r.json
		keep_report "$R"
		expect_eq "$(field .status)/$(field .verdicts.task)" ok/pass "$mode: the check wrote ($(cat "$WS/err.txt"))"
		expect_eq "$(field .verdicts.containment)/$(field .check.workspace)" clean/scratch "$mode: no denial"
		expect_eq "$(ls -A | tr '\n' ' ')" "answer.txt tracked.txt " "$mode: the host has the task's write alone"
		rm -f answer.txt
	done
	t_assert
}

# Where the overlay cannot be made (here: a workspace on overlayfs stacked
# twice, past the kernel's depth), the check's workspace stays read-only as
# before: its writes are refused and reported, and the report says why.
test_check_scratch_falls_back_read_only() {
	is_root || { skip "needs root to mount overlayfs"; return; }
	mkdir -p l1 u1 w1 m1 u2 w2 ws && echo 42 >l1/answer.txt
	mount -t overlay o1 -o lowerdir=l1,upperdir=u1,workdir=w1 m1 &&
		mount -t overlay o2 -o lowerdir=m1,upperdir=u2,workdir=w2 ws ||
		{ skip "cannot stack overlayfs twice here"; return; }
	cd ws || return 1
	cordon_run --workspace-mode direct --check 'test "$(cat answer.txt)" = 42; echo c >bycheck.txt; exit 0' -- /bin/true
	expect_eq "$(field .verdicts.task)" pass "the check ran ($ERR)"
	expect_eq "$(field .check.workspace)" read-only "the check's workspace"
	expect_match "$(field .check.workspace_reason)" "writable overlay" "the reason"
	expect_match "$ERR" "check: .*Read-only file system" "the write refused"
	expect_eq "$(field -c '[.denials[] | select(.phase == "check") | .target]')" "[\"$WS/ws/bycheck.txt\"]" "and reported"
	[ -e bycheck.txt ] && fail "the check's write reached the host"
	cd "$WS" && umount ws m1
	t_assert
}

for t in test_pytest_check_is_clean_in_a_git_workspace test_check_writes_vanish test_check_scratch_for_an_ordinary_user \
	test_check_scratch_falls_back_read_only; do
	t_run $t
done

# --- issue 28 item 1: the check sees the run's result in a nested workspace --

# The task's working directory inside a declared writable path (--rw PARENT
# with the current directory below it, --cwd below it, a policy's cwd inside
# its write path): the check's workspace shows what the run left there (made,
# changed, deleted), in review mode kept, in overlay mode before the apply.
T281_RUN='echo 42 >answer.txt && echo new >changed.txt && rm gone.txt'
T281_CHECK='test "$(cat answer.txt)" = 42 && test "$(cat changed.txt)" = new && ! test -e gone.txt && test -e kept.txt'
t281_tree() {
	rm -rf top .cordon-changes && mkdir -p top/"${1:-ws}" &&
		(cd top/"${1:-ws}" && echo old >changed.txt && echo x >gone.txt && echo k >kept.txt)
}

test_check_sees_a_workspace_nested_in_a_write_path() {
	echo '{"cwd": "./top/ws", "filesystem": {"write": ["./top"]}}' >p.json
	local mode how
	for mode in review overlay; do
		for how in flag cwd policy; do
			t281_tree
			case $how in
			flag)
				cd top/ws &&
					cordon_run --workspace-mode $mode --rw "$WS/top" --check "$T281_CHECK" -- /bin/sh -c "$T281_RUN"
				cd "$WS" ;;
			cwd) cordon_run --workspace-mode $mode --rw "$WS/top" --cwd "$WS/top/ws" --check "$T281_CHECK" \
				-- /bin/sh -c "$T281_RUN" ;;
			policy) cordon_run --workspace-mode $mode --policy p.json --check "$T281_CHECK" -- /bin/sh -c "$T281_RUN" ;;
			esac
			expect_eq "$(field .status)/$(field .enforcement.workspace_mode)" "ok/$mode" "$mode, $how: the mode ($ERR)"
			expect_eq "$(field .verdicts.task)/$(field .check.workspace)" pass/scratch "$mode, $how: the check saw the run's result ($ERR)"
			if [ $mode = review ]; then
				expect_eq "$(field .changes.state)/$(cat top/ws/changed.txt)" kept/old "$mode, $how: the host untouched"
			else
				expect_eq "$(field .changes.state)/$(cat top/ws/changed.txt)" applied/new "$mode, $how: applied"
			fi
		done
	done
	# A wrong answer, seen as such: nothing applied (on_failure keep).
	t281_tree
	cordon_run --workspace-mode overlay --on-failure keep --policy p.json --check 'test "$(cat answer.txt)" = 43' \
		-- /bin/sh -c "$T281_RUN"
	expect_eq "$(field .verdicts.task)/$(field .changes.state)" fail/kept "a wrong answer ($ERR)"
	expect_eq "$(cat top/ws/changed.txt)" old "nothing applied"
	t_assert
}

# A directory the run made anew on the way to the workspace (opaque in its
# change set: the host's files there are gone) shows only what the run put
# there; a workspace the run removed is no place to check in: task error.
test_check_sees_a_nested_workspace_made_anew() {
	echo '{"cwd": "./top/a/ws", "filesystem": {"write": ["./top"]}}' >p.json
	local where
	for where in a a/ws; do
		t281_tree a/ws
		cordon_run --workspace-mode review --policy p.json --check '! test -e kept.txt && test "$(cat answer.txt)" = 7' \
			-- /bin/sh -c "cd $WS/top && rm -rf $where && mkdir -p a/ws && echo 7 >a/ws/answer.txt"
		expect_eq "$(field .status)/$(field .verdicts.task)" ok/pass "$where made anew: the check saw it ($ERR)"
		[ -e top/a/ws/kept.txt ] || fail "review mode deleted on the host"
	done
	for where in a a/ws; do
		t281_tree a/ws
		cordon_run --workspace-mode review --policy p.json --check 'true' -- /bin/sh -c "cd $WS/top && rm -rf $where"
		expect_eq "$(field .status)/$(field .verdicts.task)" ok/error "$where removed: no check ($ERR)"
		expect_match "$(field .check.reason)" "top/a/ws: the run removed it" "$where removed: the reason"
	done
	t_assert
}

test_check_sees_a_nested_workspace_for_an_ordinary_user() {
	ordinary_user_or_skip || return
	echo '{"cwd": "./top/ws", "filesystem": {"write": ["./top"]}, "enforcement": {"allow_weaker": ["cgroup"]}}' >p.json
	local mode
	for mode in review overlay; do
		t281_tree && chown -R 65534:65534 "$WS"
		setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --workspace-mode "$mode" \
			--policy p.json --report "$WS/r.json" --check "$T281_CHECK" -- /bin/sh -c "$T281_RUN" 2>"$WS/err.txt"
		R=$WS/r.json
		keep_report "$R"
		expect_eq "$(field .status)/$(field .enforcement.workspace_mode)" "ok/$mode" "$mode: the mode ($(cat "$WS/err.txt"))"
		expect_eq "$(field .verdicts.task)/$(field .check.workspace)" pass/scratch "$mode: the check saw the run's result ($(cat "$WS/err.txt"))"
	done
	expect_eq "$(cat top/ws/changed.txt)" new "overlay: applied"
	t_assert
}

for t in test_check_sees_a_workspace_nested_in_a_write_path test_check_sees_a_nested_workspace_made_anew \
	test_check_sees_a_nested_workspace_for_an_ordinary_user; do
	t_run $t
done

# --- check-ignored (F4): the task check judges what the host gets -----------

# The task writes mod.py answering 0 and a __pycache__ .pyc of a version
# answering 42 with the same size and mtime: python loads the .pyc. The
# apply leaves caches out (the ignore list), so the host gets mod.py alone,
# where the check fails: in overlay and review mode the check must fail too
# (the ignored entries are removed from the change set before it). Direct
# mode is unchanged: the host is the check's view, .pyc and all.
T_F4_TASK='printf "def answer(): return 42\n" >mod.py; touch -d 2020-01-01 mod.py; /usr/bin/python3 -m py_compile mod.py
printf "def answer(): return 0 \n" >mod.py; touch -d 2020-01-01 mod.py'
T_F4_CHECK="/usr/bin/python3 -c 'import mod, sys; sys.exit(mod.answer() != 42)'"
test_check_does_not_see_what_the_apply_leaves_out() {
	[ -x /usr/bin/python3 ] || { t_skip "no /usr/bin/python3"; return; }
	local mode dir
	for mode in overlay review; do
		cordon_run --workspace-mode "$mode" --check "$T_F4_CHECK" -- /bin/sh -c "$T_F4_TASK"
		expect_eq "$(field .status)/$(field .verdicts.containment)" ok/clean "$mode: the run ($ERR)"
		expect_eq "$(field .verdicts.task)" fail "$mode: the check judged mod.py as the host gets it"
		if [ "$mode" = review ]; then
			dir=$(field .changes.dir)
			expect_eq "$(find "$dir"/*/upper -mindepth 1 -printf '%P\n' | sort | tr '\n' ' ')" "mod.py " \
				"review: the cache is no longer in the change set"
			"$CORDON" apply "$dir" >/dev/null 2>&1 || fail "review: cordon apply"
		else
			expect_eq "$(field .changes.state)" applied "overlay: applied (on_failure apply)"
		fi
		expect_eq "$(ls -A | tr '\n' ' ')" "mod.py " "$mode: the host has mod.py alone"
		expect_eq "$(/usr/bin/python3 -B -c 'import mod; print(mod.answer())')" 0 "$mode: the host's answer"
		rm -rf mod.py __pycache__
	done
	cordon_run --workspace-mode direct --check "$T_F4_CHECK" -- /bin/sh -c "$T_F4_TASK"
	expect_eq "$(field .verdicts.task)" pass "direct: the host has the .pyc, the check sees it ($ERR)"
	[ -d __pycache__ ] || fail "direct: the run's cache is on the host"
	t_assert
}

for t in test_check_does_not_see_what_the_apply_leaves_out; do
	t_run $t
done

# --- outside review F3 (issue 27.6): check.files read through a secret -----

# The task read the check's expected answer through a secret whose file lies
# in check.files (mounted at /run/e) and passed. Every host file the run
# reads by another route than a mount (a secret's file, as a mount or a
# variable, network.upstream_ca) is compared with check.files, links
# resolved: validate, run and explain refuse it and name both.
test_check_files_read_through_a_secret_are_refused() {
	mkdir -p "$T_TMP/chk" && echo 42 >"$T_TMP/chk/expected.txt"
	ln -s "$T_TMP/chk" "$T_TMP/lnk"
	local check="\"check\": {\"command\": \"sh -c 'test \\\"\$(cat $WS/answer.txt)\\\" = \\\"\$(cat expected.txt)\\\"'\", \"files\": \"$T_TMP/chk\"}"
	cat >p.json <<J
{"secrets": {"E": {"file": "$T_TMP/lnk/expected.txt", "allow_short": true, "mount": "/run/e"}}, $check}
J
	"$CORDON" validate p.json >out.txt 2>err.txt
	expect_eq "$?" 2 "validate's exit status ($(cat out.txt))"
	expect_match "$(cat err.txt)" "\"check.files\" $T_TMP/chk overlaps $T_TMP/lnk/expected.txt \\(the file of secret E, mounted at /run/e\\), which the run reads" "validate's message"
	cordon_run --policy p.json -- /bin/sh -c 'cat /run/e >answer.txt'
	expect_eq "$(field .status)" setup-error "status"
	expect_nomatch "$(field .verdicts.task)" pass "task verdict"
	[ -e answer.txt ] && fail "the task ran"
	# A secret given on the command line, as a variable: the plan refuses it.
	echo "{$check}" >p.json
	"$CORDON" validate p.json >/dev/null || fail "validate without the secret"
	cordon_run --policy p.json --secret "E=file:$T_TMP/lnk/expected.txt" -- /bin/sh -c 'printf %s "$E" >answer.txt'
	expect_eq "$(field .status)" setup-error "status with --secret"
	expect_match "$(field .reason)" "check.files $T_TMP/chk overlaps $T_TMP/lnk/expected.txt \\(the file of secret E, the variable of the run\\)" "reason"
	expect_nomatch "$(field .verdicts.task)" pass "task verdict with --secret"
	[ -e answer.txt ] && fail "the task ran with --secret"
	"$CORDON" explain --policy p.json --secret "E=file:$T_TMP/chk/expected.txt" -- /bin/true >out.txt 2>&1 &&
		fail "explain accepted it"
	expect_match "$(cat out.txt)" "overlaps $T_TMP/chk/expected.txt \\(the file of secret E" "explain's message"
	# The proxy's upstream CA is a host file the run reads too.
	echo "{\"network\": {\"upstream_ca\": \"$T_TMP/chk/expected.txt\"}, $check}" >p.json
	"$CORDON" validate p.json >/dev/null 2>err.txt && fail "validate accepted network.upstream_ca"
	expect_match "$(cat err.txt)" "\\(network.upstream_ca\\), which the run reads" "validate's message for upstream_ca"
	t_assert
}

t_run test_check_files_read_through_a_secret_are_refused
