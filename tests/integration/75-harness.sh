# Issue 12: works the way an agent harness uses it — host character devices
# (--dev, filesystem.devices), each verb's --help, the man page.
. "$(dirname "$0")/../lib.sh"

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
# renders each without a warning, and `man cordon-VERB` finds it by MANPATH.
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
	expect_match "$(printf '%s ' $verbs)" "^apply changes discard explain ledger run serve validate " "the verbs cordon --help lists"
	make -s -C "$TOP" install BUILD="$BUILD" DESTDIR="$T_TMP/inst" >"$T_TMP/inst.log" 2>&1 ||
		fail "make install: $(tail -3 "$T_TMP/inst.log")"
	man1=$(dirname "$(find "$T_TMP/inst" -path '*/man1/cordon.1' | head -1)")
	[ -f "$man1/cordon.1" ] || fail "make install installs no cordon.1 in a man1"
	for page in cordon $(printf 'cordon-%s ' $verbs); do
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
