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

# The man page: installed by meson, renders without a warning, and names
# every option `cordon run --help` lists.
test_man_page() {
	local page="$TOP/man/cordon.1"
	if ! command -v groff >/dev/null || ! command -v man >/dev/null; then
		t_skip "groff or man missing"
		return
	fi
	groff -ww -man -z "$page" 2>"$T_TMP/e"
	expect_eq "$(cat "$T_TMP/e")" "" "groff -ww warnings"
	MANWIDTH=80 man --warnings -l "$page" >"$T_TMP/out" 2>"$T_TMP/e"
	expect_eq "$(cat "$T_TMP/e")" "" "man --warnings"
	expect_match "$(head -1 "$T_TMP/out")" "^CORDON\(1\)" "rendered"
	local o
	for o in $("$CORDON" run --help | grep -oE -- '--[a-z-]+' | sort -u); do
		grep -qF -- "$(printf '%s' "$o" | sed 's/-/\\-/g')" "$page" || fail "man page lacks $o"
		grep -qF -- "\`$o" "$TOP/README.md" || fail "README lacks $o"
	done
	if [ -f "$BUILD/build.ninja" ] && command -v meson >/dev/null; then
		# make install, as --help's "see cordon(1)" asks of a new user.
		make -s -C "$TOP" install BUILD="$BUILD" DESTDIR="$T_TMP/inst" >"$T_TMP/inst.log" 2>&1 ||
			fail "make install: $(tail -3 "$T_TMP/inst.log")"
		local man1
		man1=$(find "$T_TMP/inst" -path '*/man1/cordon.1' | head -1)
		cmp -s "$page" "$man1" || fail "cordon.1 not installed in man1"
		[ -n "$man1" ] && expect_match "$(MANPATH=${man1%/man1/*} man -w cordon 2>&1)" "/man1/cordon\.1" "man finds cordon(1) after make install"
		[ -x "$(find "$T_TMP/inst" -path '*/bin/cordon' | head -1)" ] || fail "make install installs the program"
	fi
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

for t in test_verb_help test_man_page test_dev_fuse_exposed test_dev_usable_and_not_a_denial test_dev_refusals test_dev_ceiling test_demo_leaves_nothing; do
	t_run $t
done
