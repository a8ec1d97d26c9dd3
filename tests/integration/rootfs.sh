# cordon run --rootfs DIR (policy "root"): the system view from an unpacked
# image directory, read-only, in place of the host's /usr, /etc, /bin...;
# /proc, /dev, /tmp, the workspace and the grants as always (docs/images.md).
. "$(dirname "$0")/../lib.sh"
# The image's workspace is an overlay: as root it needs an idmapped mount,
# which Debian 12's /tmp (tmpfs on 6.1) cannot have; those tests' images go
# in their workspace, on /var/tmp there.
overlay_workspaces '^test_rootfs_(image_workspace.*|serve_policy)$' only

# make_image DIR: a busybox root (the static binary and its applet links),
# an /etc/os-release of its own, a setuid-root copy of probe-whoami, and
# empty /proc, /dev, /tmp as an exported image has them.
make_image() {
	local r=$1 a
	# As root the run is another user: it must reach the image (T_TMP is 0700).
	chmod 755 "$T_TMP"
	mkdir -p "$r/bin" "$r/etc" "$r/proc" "$r/dev" "$r/tmp" "$r/root"
	chmod 755 "$r"
	cp "$(command -v busybox)" "$r/bin/busybox"
	for a in sh cat ls id echo touch stat test true; do ln -s busybox "$r/bin/$a"; done
	ln -s bin "$r/sbin" # a top-level link, as merged-/usr images have them
	printf 'ID=cordon-test-image\nNAME="a busybox image"\n' >"$r/etc/os-release"
	printf '127.0.0.1\tlocalhost\n' >"$r/etc/hosts"
	cp "$WHOAMI" "$r/bin/whoami-suid"
	chown 0:0 "$r/bin/whoami-suid"
	chmod 4755 "$r/bin/whoami-suid"
}

need_busybox() {
	command -v busybox >/dev/null || t_skip "no busybox on this host"
}

test_rootfs_is_the_system_view() {
	need_busybox || return
	[ -x /usr/bin/python3 ] || t_skip "the host has no /usr/bin/python3 to be hidden" || return
	local img=$T_TMP/img
	make_image "$img"
	cordon_run --rootfs "$img" -- /bin/sh -c '
		cat /etc/os-release
		test -x /bin/busybox && echo has-busybox
		/sbin/busybox true && echo through-the-link
		test -e /usr/bin/python3 && echo host-python || echo no-host-python
		touch /bin/planted 2>/dev/null && echo image-written || echo image-read-only
		echo changed >>/etc/os-release 2>/dev/null && echo etc-written || echo etc-read-only
		echo made >./from-the-run && echo workspace-written
		cat /etc/hosts'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_match "$OUT" '^ID=cordon-test-image$' "the image's /etc/os-release"
	expect_match "$OUT" '^has-busybox$' "the image's /bin/busybox"
	expect_match "$OUT" '^through-the-link$' "the image's /sbin -> bin"
	expect_match "$OUT" '^no-host-python$' "the host's /usr/bin/python3 is not in the view"
	expect_match "$OUT" '^image-read-only$' "the image's /bin is read-only"
	expect_match "$OUT" '^etc-read-only$' "the image's /etc is read-only"
	expect_match "$OUT" '^workspace-written$' "the workspace is writable"
	expect_match "$OUT" '127\.0\.1\.1.cordon' "/etc/hosts is the image's, with the run's own name"
	[ ! -e "$img/bin/planted" ] || fail "a file was made in the image"
	expect_eq "$(cat "$img/etc/os-release" | wc -l)" 2 "the image's os-release unchanged"
	expect_eq "$(cat "$WS/from-the-run" 2>/dev/null)" made "the run's file in the workspace on the host"
	expect_eq "$(field .rootfs)" "$img" "report .rootfs"
	check_report_shape
	t_assert
}

test_rootfs_policy_key() {
	need_busybox || return
	local img=$T_TMP/img
	make_image "$img"
	printf '{"root": "%s"}\n' "$img" >"$T_TMP/policy.json"
	cordon_run --policy "$T_TMP/policy.json" -- /bin/cat /etc/os-release
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_match "$OUT" '^ID=cordon-test-image$' "the image's /etc/os-release, from the policy's root"
	expect_eq "$(field .rootfs)" "$img" "report .rootfs"
	# Without it, the host's view and a null field.
	cordon_run -- /bin/sh -c 'test -x /usr/bin/python3 && echo host-view'
	expect_match "$OUT" '^host-view$' "the host's view without a root"
	expect_eq "$(field .rootfs)" null "report .rootfs without a root"
	t_assert
}

test_rootfs_setuid_gives_no_privilege() {
	need_busybox || return
	local img=$T_TMP/img
	make_image "$img"
	cordon_run --rootfs "$img" -- /bin/sh -c 'ls -ln /bin/whoami-suid; /bin/whoami-suid'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	local uid euid
	uid=$(sed -n 's/^uid //p' <<<"$OUT")
	euid=$(sed -n 's/^euid //p' <<<"$OUT")
	[ -n "$uid" ] && [ "$uid" != 0 ] || fail "the run is not root inside (uid '$uid')"
	expect_eq "$euid" "$uid" "the image's setuid-root file gives no other identity"
	# root's files show as the overflow owner: host root is not mapped in.
	expect_match "$OUT" '^-rwsr-xr-x +1 +65534 +65534 ' "the image's root-owned file inside"
	t_assert
}

# refused WHAT REGEX ARGS...: the run is refused before anything runs, with
# one line naming the directory.
refused() {
	local what=$1 re=$2
	shift 2
	rm -f "$WS/ran"
	cordon_run "$@" -- /bin/sh -c 'echo ran >ran'
	expect_eq "$RC" 125 "$what: exit"
	expect_eq "$(printf '%s\n' "$ERR" | wc -l)" 1 "$what: one line ($ERR)"
	expect_match "$ERR" "$re" "$what"
	[ ! -e "$WS/ran" ] || fail "$what: the command ran"
}

test_rootfs_refusals() {
	need_busybox || return
	local img=$T_TMP/img
	make_image "$img"
	touch "$T_TMP/file"
	ln -s "$img" "$T_TMP/link"
	refused "a file" "^cordon: setup-error: rootfs $T_TMP/file is not a directory$" --rootfs "$T_TMP/file"
	refused "a symbolic link" "^cordon: setup-error: rootfs $T_TMP/link is a symbolic link" --rootfs "$T_TMP/link"
	refused "absent" "rootfs $T_TMP/none: No such file or directory" --rootfs "$T_TMP/none"
	refused "the host's root" "rootfs / is the host's root" --rootfs /
	chmod 777 "$img"
	refused "writable by others" "rootfs $img: $img \(uid 0, mode 0777\) is writable by other users" --rootfs "$img"
	chmod 755 "$img"
	chown 65534 "$img"
	refused "another user's" "rootfs $img: $img \(uid 65534, mode 0755\) is (owned by|another user's)" --rootfs "$img"
	chown 0 "$img"
	mkdir -m 777 "$T_TMP/open"
	make_image "$T_TMP/open/img"
	refused "below a directory others write" "rootfs $T_TMP/open/img: $T_TMP/open \(uid 0, mode 0777\) is writable by other users and not sticky" --rootfs "$T_TMP/open/img"
	mkdir -m 700 "$T_TMP/priv"
	make_image "$T_TMP/priv/img"
	refused "below a directory the run cannot search" "rootfs $T_TMP/priv/img: $T_TMP/priv \(uid 0, mode 0700\) cannot be searched by other users" --rootfs "$T_TMP/priv/img"
	rmdir "$img/proc" && ln -s /proc "$img/proc"
	refused "a /proc link" "rootfs $img: the image's /proc is a symbolic link \(to /proc\)" --rootfs "$img"
	rm "$img/proc" && mkdir "$img/proc"
	rmdir "$img/dev" && ln -s /dev "$img/dev"
	refused "a /dev link" "rootfs $img: the image's /dev is a symbolic link \(to /dev\)" --rootfs "$img"
	rm "$img/dev" && mkdir "$img/dev"
	# A grant in a directory of the image where the image has no mount point.
	local top=${BUILD#/}
	top=${top%%/*}
	mkdir "$img/$top"
	refused "no mount point in the image" "^cordon: setup-error: $BUILD lies in the image's /$top, which has nothing there" --rootfs "$img"
	rmdir "$img/$top"
	cordon_run --rootfs "$img" -- /bin/true
	expect_eq "$RC" 0 "the image put right runs (stderr: $ERR)"
	t_assert
}

test_rootfs_is_a_read_grant_under_the_ceiling() {
	need_busybox || return
	local img=$T_TMP/img
	make_image "$img"
	printf '{"filesystem": {"read": ["%s"], "write": ["%s"]}}\n' "$BUILD" "$WS" >"$T_TMP/ceiling.json"
	cordon_run --ceiling "$T_TMP/ceiling.json" --rootfs "$img" -- /bin/true
	expect_eq "$RC" 123 "a rootfs outside the ceiling's prefixes: exit (stderr: $ERR)"
	expect_match "$ERR" "^cordon: unauthorized: rootfs $img: not under any read or write prefix of the ceiling" "the refusal"
	expect_eq "$(field -c '[.grants[] | select(.kind == "rootfs") | .allowed]')" '[false]' "the grant in the report"
	printf '{"filesystem": {"read": ["%s", "%s"], "write": ["%s"]}}\n' "$BUILD" "$img" "$WS" >"$T_TMP/ceiling.json"
	cordon_run --ceiling "$T_TMP/ceiling.json" --rootfs "$img" -- /bin/true
	expect_eq "$RC" 0 "under a read prefix: exit (stderr: $ERR)"
	expect_eq "$(field -c '[.grants[] | select(.kind == "rootfs") | .allowed]')" '[true]' "the grant in the report"
	t_assert
}

test_rootfs_explain() {
	need_busybox || return
	local img=$T_TMP/img out
	make_image "$img"
	out=$("$CORDON" explain --rootfs "$img" -- /bin/sh 2>&1)
	expect_match "$out" "^rootfs: $img " "explain names the rootfs"
	expect_match "$out" '^  ro \(image\) /bin ' "the image's /bin"
	expect_match "$out" '^  ro \(image\) /etc ' "the image's /etc"
	expect_match "$out" '^  symlink \(image\) /sbin ' "the image's /sbin link"
	expect_nomatch "$out" ' /usr ' "no host /usr"
	out=$("$CORDON" explain --json --rootfs "$img" -- /bin/sh)
	expect_eq "$(jq -r .rootfs <<<"$out")" "$img" "explain JSON .rootfs"
	expect_eq "$(jq -r '[.paths[] | select(.path == "/usr")] | length' <<<"$out")" 0 "no /usr path in JSON"
	out=$("$CORDON" explain --json -- /bin/sh)
	expect_eq "$(jq -r .rootfs <<<"$out")" null "explain JSON .rootfs without a root"
	t_assert
}

# make_task_image DIR: make_image with a task's repository at /testbed, as
# SWE-bench images hold it: root's files, and a setuid-root copy of
# probe-whoami there too.
make_task_image() {
	local r=$1
	make_image "$r"
	mkdir -p "$r/testbed/src"
	printf 'hello\n' >"$r/testbed/README"
	printf 'print(1)\n' >"$r/testbed/src/a.py"
	cp "$WHOAMI" "$r/testbed/whoami-suid"
	chown -R 0:0 "$r/testbed"
	chmod 4755 "$r/testbed/whoami-suid"
}

# A fingerprint of a tree: every entry's path, type, owner, mode, size and
# content hash. Equal before and after: nothing of it was written.
tree_sum() {
	(cd "$1" && find . -printf '%p %y %U:%G %m %s\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum
}

test_rootfs_image_workspace() {
	need_busybox || return
	local img=$WS/img before cs
	make_task_image "$img"
	before=$(tree_sum "$img")
	cordon_run --rootfs "$img" --workspace /testbed -- /bin/sh -c '
		pwd
		cat README
		echo changed >>README && echo new >new.txt && rm src/a.py && echo workspace-written
		test -e '"$WS"' && echo host-cwd-seen || echo host-cwd-not-seen'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_match "$OUT" '^/testbed$' "the run starts in the image's workspace"
	expect_match "$OUT" '^hello$' "the image's file"
	expect_match "$OUT" '^workspace-written$' "the workspace is writable"
	expect_match "$OUT" '^host-cwd-not-seen$' "no implicit grant of the current directory"
	expect_eq "$(tree_sum "$img")" "$before" "the image is not written"
	expect_eq "$(field .image_workspace)" /testbed "report .image_workspace"
	expect_eq "$(field .enforcement.workspace_mode)" review "review by default"
	expect_eq "$(field .changes.state)" kept "the change set is kept"
	expect_eq "$(field -c '[.outputs[] | "\(.change) \(.path)"]')" '["modified README","created new.txt","deleted src/a.py"]' "outputs"
	cs=$(field -r .changes.dir)
	expect_eq "$(dirname "$(dirname "$cs")")" "$WS" "the change set is beside the image, not in it"
	local diff
	diff=$("$CORDON" changes "$cs" --diff 2>&1)
	expect_match "$diff" '^\+changed$' "cordon changes --diff: the modification"
	expect_match "$diff" '^\+\+\+ b/new.txt$' "cordon changes --diff: the new file"
	expect_match "$diff" '^--- a/src/a.py$' "cordon changes --diff: the deletion"
	# The patch applies to a copy of the image's directory.
	cp -a "$img/testbed" "$T_TMP/copy"
	(cd "$T_TMP/copy" && git apply -p1 - <<<"$diff") || fail "the patch does not apply"
	expect_eq "$(cat "$T_TMP/copy/README" | wc -l)" 2 "the patch's README"
	# What the run wrote belongs to its own host uid, not to host root.
	expect_nomatch "$(stat -c %u "$cs/0/upper/new.txt")" '^0$' "the change set's new file is not host root's"
	"$CORDON" discard "$cs" >/dev/null 2>&1
	check_report_shape
	t_assert
}

# The task check runs in the task's system view: the same image root, not
# the host's (a check that runs the image's python or test runner). The
# image's os-release is what the check reads.
test_rootfs_check_in_the_image() {
	need_busybox || return
	local img=$WS/img
	make_image "$img"
	cordon_run --rootfs "$img" --check 'grep -q "^ID=cordon-test-image$" /etc/os-release' -- /bin/true
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_eq "$(field '.verdicts.task + " " + .check.status')" "pass ok" "the check read the image's /etc/os-release"
	t_assert
}

# A task check with the image's workspace (--workspace /testbed): it sees
# the run's change set over the image's directory where the run saw it,
# starts there, writes to its own scratch layer; neither reaches the image
# nor the change set.
test_rootfs_image_workspace_check() {
	need_busybox || return
	local img=$WS/img before cs
	make_task_image "$img"
	before=$(tree_sum "$img")
	cordon_run --rootfs "$img" --workspace /testbed \
		--check '[ "$(pwd)" = /testbed ] && [ "$(cat README new.txt)" = "hello
changed
new" ] && [ ! -e src/a.py ] && echo scratch >check.txt && grep -q "^ID=cordon-test-image$" /etc/os-release' \
		-- /bin/sh -c 'echo changed >>README && echo new >new.txt && rm src/a.py'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_eq "$(field '.verdicts.task + " " + .check.status + " " + .check.workspace')" "pass ok scratch" \
		"the check saw the run's changes at /testbed (stderr: $ERR)"
	expect_eq "$(tree_sum "$img")" "$before" "the image is not written"
	cs=$(field -r .changes.dir)
	expect_eq "$(field -c '[.outputs[] | "\(.change) \(.path)"]')" '["modified README","created new.txt","deleted src/a.py"]' \
		"the change set holds the run's changes, not the check's"
	[ ! -e "$cs/0/upper/check.txt" ] || fail "the check's file reached the change set"
	# Without the run's changes the same check fails: it is what it judges.
	cordon_run --rootfs "$img" --workspace /testbed --check 'test -e new.txt' -- /bin/true
	expect_eq "$(field .verdicts.task)" fail "a check of a run that changed nothing"
	"$CORDON" discard "$cs" >/dev/null 2>&1
	"$CORDON" discard "$(field -r .changes.dir)" >/dev/null 2>&1
	t_assert
}

test_rootfs_image_workspace_policy_key() {
	need_busybox || return
	local img=$WS/img
	make_task_image "$img"
	printf '{"root": "%s", "filesystem": {"workspace": "/testbed"}}\n' "$img" >"$T_TMP/policy.json"
	cordon_run --policy "$T_TMP/policy.json" -- /bin/sh -c 'pwd; echo x >made'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_match "$OUT" '^/testbed$' "the policy's workspace"
	expect_eq "$(field .image_workspace)" /testbed "report .image_workspace"
	[ ! -e "$img/testbed/made" ] || fail "the run's file reached the image"
	"$CORDON" discard "$(field -r .changes.dir)" >/dev/null 2>&1
	t_assert
}

test_rootfs_image_workspace_refusals() {
	need_busybox || return
	local img=$WS/img
	make_task_image "$img"
	ln -s testbed "$img/tb"
	refused "direct" "^cordon: setup-error: workspace /testbed is a directory of the image: workspace mode direct would write into the image" --rootfs "$img" --workspace /testbed --workspace-mode direct
	refused "overlay" "^cordon: setup-error: workspace /testbed is a directory of the image: workspace mode overlay would write into the image" --rootfs "$img" --workspace /testbed --workspace-mode overlay
	refused "absent" "^cordon: setup-error: workspace /none: not a directory of the image $img \(No such file or directory\)$" --rootfs "$img" --workspace /none
	refused "a link" "^cordon: setup-error: workspace /tb: not a directory of the image $img \(.*a symbolic link on the way\)$" --rootfs "$img" --workspace /tb
	refused "a file" "^cordon: setup-error: workspace /testbed/README: not a directory of the image" --rootfs "$img" --workspace /testbed/README
	refused "relative" "^cordon: workspace testbed: the path in the run must be absolute$" --rootfs "$img" --workspace testbed
	refused "cordon's /proc" "^cordon: workspace /proc/x: cordon's own /proc is there" --rootfs "$img" --workspace /proc/x
	refused "without an image" "^cordon: setup-error: workspace /testbed: a directory of an image, which needs --rootfs" --workspace /testbed
	t_assert
}

test_rootfs_image_workspace_setuid() {
	need_busybox || return
	local img=$WS/img sum
	make_task_image "$img"
	sum=$(sha256sum <"$img/testbed/whoami-suid")
	cordon_run --rootfs "$img" --workspace /testbed -- /bin/sh -c '
		ls -ln whoami-suid; ./whoami-suid
		echo planted >>whoami-suid && echo wrote-it'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	local uid euid
	uid=$(sed -n 's/^uid //p' <<<"$OUT")
	euid=$(sed -n 's/^euid //p' <<<"$OUT")
	[ -n "$uid" ] && [ "$uid" != 0 ] || fail "the run is not root inside (uid '$uid')"
	expect_eq "$euid" "$uid" "the image's setuid-root file in the workspace gives no other identity"
	expect_match "$OUT" '^wrote-it$' "the write went to the change set"
	expect_eq "$(sha256sum <"$img/testbed/whoami-suid")" "$sum" "the image's file is unchanged"
	expect_eq "$(stat -c '%u %a' "$img/testbed/whoami-suid")" "0 4755" "the image's file keeps its owner and mode"
	local up
	up=$(field -r .changes.dir)/0/upper/whoami-suid
	[ -f "$up" ] || fail "no copy in the change set"
	expect_nomatch "$(stat -c %u "$up")" '^0$' "the change set's copy is not host root's"
	expect_nomatch "$(stat -c %A "$up")" 's' "the change set's copy is not setuid"
	"$CORDON" discard "$(field -r .changes.dir)" >/dev/null 2>&1
	t_assert
}

test_rootfs_image_workspace_explain() {
	need_busybox || return
	local img=$WS/img out
	make_task_image "$img"
	out=$("$CORDON" explain --rootfs "$img" --workspace /testbed -- /bin/sh 2>&1)
	expect_match "$out" "^  rw \(image workspace, from $img/testbed\) /testbed " "explain's path line"
	expect_match "$out" "^workspace: /testbed, the image's $img/testbed " "explain's workspace line"
	expect_match "$out" "^workspace mode: review " "explain's mode"
	expect_match "$out" "^cwd: /testbed$" "explain's cwd"
	out=$("$CORDON" explain --json --rootfs "$img" --workspace /testbed -- /bin/sh)
	expect_eq "$(jq -c .image_workspace <<<"$out")" "{\"path\":\"/testbed\",\"host\":\"$img/testbed\"}" "explain JSON .image_workspace"
	expect_eq "$(jq -r '[.paths[] | select(.path == "/testbed")] | length' <<<"$out")" 1 "one entry at /testbed"
	t_assert
}

# Protected paths hold in the image's workspace, at its path in the run.
test_rootfs_image_workspace_protected() {
	need_busybox || return
	local img=$WS/img
	make_task_image "$img"
	mkdir -p "$img/testbed/.git/hooks"
	cordon_run --rootfs "$img" --workspace /testbed -- /bin/sh -c '
		echo evil >.git/hooks/pre-commit 2>/dev/null && echo hook-written || echo hook-refused
		echo fine >ok.txt && echo other-written'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_match "$OUT" '^hook-refused$' "a protected path of the image's workspace"
	expect_match "$OUT" '^other-written$' "the rest of it is writable"
	"$CORDON" discard "$(field -r .changes.dir)" >/dev/null 2>&1
	t_assert
}

# --ro HOST:PATH and --rw HOST:PATH: a host directory seen at PATH.
test_grant_at_path() {
	local in=$T_TMP/in out=$T_TMP/out
	mkdir -p "$in" "$out"
	echo data >"$in/f"
	cordon_run --ro "$in:/srv/in" --rw "$out:/srv/out" -- /bin/sh -c '
		cat /srv/in/f
		echo x >/srv/in/g 2>/dev/null && echo ro-written || echo ro-read-only
		echo made >/srv/out/o && echo rw-written
		test -e '"$in"' && echo host-path-seen || echo host-path-not-seen'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_match "$OUT" '^data$' "the host file at /srv/in"
	expect_match "$OUT" '^ro-read-only$' "--ro HOST:PATH is read-only"
	expect_match "$OUT" '^rw-written$' "--rw HOST:PATH is writable"
	expect_match "$OUT" '^host-path-not-seen$' "the host path is not shown at its own path"
	expect_eq "$(cat "$out/o" 2>/dev/null)" made "the run's file on the host (overlay applied)"
	[ ! -e "$in/g" ] || fail "a file was made in the read-only grant"
	# The policy's form, the same string.
	printf '{"filesystem": {"read": ["%s:/srv/in"]}}\n' "$in" >"$T_TMP/policy.json"
	cordon_run --policy "$T_TMP/policy.json" -- /bin/cat /srv/in/f
	expect_eq "$RC" 0 "policy form: exit (stderr: $ERR)"
	expect_match "$OUT" '^data$' "policy form: the host file at /srv/in"
	local out2
	out2=$("$CORDON" explain --ro "$in:/srv/in" -- /bin/true 2>&1)
	expect_match "$out2" "^  ro \(from $in\) /srv/in " "explain names the host directory"
	# A working directory in it: that is the workspace, the current
	# directory is not granted besides.
	out2=$("$CORDON" explain --rw "$out:/srv/out" --cwd /srv/out -- /bin/true 2>&1)
	expect_match "$out2" "^cwd: /srv/out$" "explain's cwd"
	expect_nomatch "$out2" "^  rw +$WS " "no implicit grant of the current directory"
	t_assert
}

test_grant_at_path_refusals() {
	local d=$T_TMP/d
	mkdir -p "$d"
	refused "the root" "^cordon: --rw: rw /: the run's root cannot be replaced" --rw "$d:/"
	refused "cordon's /proc" "^cordon: --rw: rw /proc/x: cordon's own /proc is there" --rw "$d:/proc/x"
	refused "cordon's /dev" "^cordon: --ro: ro /dev: cordon's own /dev is there" --ro "$d:/dev"
	refused "cordon's /tmp" "^cordon: --rw: rw /tmp/x: cordon's own /tmp is there" --rw "$d:/tmp/x"
	refused "not normal" "^cordon: --rw: rw /a/../b: the path in the run must be in its normal form \(/b\)$" --rw "$d:/a/../b"
	printf '{"filesystem": {"write": ["%s:/proc"]}}\n' "$d" >"$T_TMP/policy.json"
	refused "policy form" "filesystem.write.*rw /proc: cordon's own /proc is there" --policy "$T_TMP/policy.json"
	t_assert
}

# Under a ceiling, the host directory is what is checked, not the path in the run.
test_grant_at_path_ceiling() {
	local d=$T_TMP/d
	mkdir -p "$d"
	printf '{"filesystem": {"read": ["%s", "/srv"], "write": ["%s"]}}\n' "$BUILD" "$WS" >"$T_TMP/ceiling.json"
	cordon_run --ceiling "$T_TMP/ceiling.json" --ro "$d:/srv/in" -- /bin/true
	expect_eq "$RC" 123 "a host directory outside the ceiling, at a path inside it: exit (stderr: $ERR)"
	printf '{"filesystem": {"read": ["%s", "%s"], "write": ["%s"]}}\n' "$BUILD" "$d" "$WS" >"$T_TMP/ceiling.json"
	cordon_run --ceiling "$T_TMP/ceiling.json" --ro "$d:/srv/in" -- /bin/true
	expect_eq "$RC" 0 "the host directory under the ceiling: exit (stderr: $ERR)"
	t_assert
}

# A Debian 12 root made by debootstrap from apt's mirror (scripts/debian-root.sh),
# cached by its recipe and shared read-only. The suite never reaches a mirror
# on its own (tests talk to loopback only): it uses the cached root, and
# builds it only with CORDON_TEST_DEBIAN_BUILD=1 (CI, once per recipe).
debian_root() {
	[ "$(id -u)" = 0 ] || { t_skip "a Debian root is made and used as root"; return; }
	DEBIAN_ROOT=$("$TOP/scripts/debian-root.sh" --cached) && return 0
	[ "${CORDON_TEST_DEBIAN_BUILD:-0}" = 1 ] ||
		{ t_skip "no Debian root cached (scripts/debian-root.sh; CORDON_TEST_DEBIAN_BUILD=1 builds it from apt's mirror)"; return; }
	DEBIAN_ROOT=$("$TOP/scripts/debian-root.sh" 2>"$T_TMP/debian-root.err") ||
		{ t_skip "no Debian root: $(tail -n1 "$T_TMP/debian-root.err")"; return; }
}

test_rootfs_debian() {
	debian_root || return
	cordon_run --rootfs "$DEBIAN_ROOT" -- /bin/bash -c 'cat /etc/debian_version; echo "bash $BASH_VERSION"; touch /usr/planted 2>/dev/null && echo usr-written || echo usr-read-only'
	expect_eq "$RC" 0 "exit (stderr: $ERR)"
	expect_match "$OUT" '^12\.' "the root's /etc/debian_version"
	expect_match "$OUT" '^bash 5\.' "the root's /bin/bash"
	expect_match "$OUT" '^usr-read-only$' "the root's /usr is read-only"
	[ ! -e "$DEBIAN_ROOT/usr/planted" ] || fail "a file was made in the shared root"
	expect_eq "$(field .rootfs)" "$DEBIAN_ROOT" "report .rootfs"
	t_assert
}

# cordon serve: a run's policy with "root" and the image's workspace; a
# client of a root server may name as root only what it may read itself.
test_rootfs_serve_policy() {
	need_busybox || return
	command -v curl >/dev/null || t_skip "no curl" || return
	local img=$WS/img sock=$T_TMP/s.sock out srv i pol
	make_task_image "$img"
	printf '{"limits": {"wall_time": "1h"}}\n' >"$T_TMP/ceiling.json"
	"$CORDON" serve --socket "$sock" --state-dir "$WS/state" --ceiling "$T_TMP/ceiling.json" \
		--allow-uid 65534 --socket-mode 0666 2>"$T_TMP/serve.log" &
	srv=$!
	for i in $(seq 1 200); do
		[ -S "$sock" ] && break
		sleep 0.05
	done
	[ -S "$sock" ] || { kill "$srv"; fail "the server did not start: $(cat "$T_TMP/serve.log")"; t_assert; return; }
	pol="{\"root\": \"$img\", \"filesystem\": {\"workspace\": \"/testbed\"}}"
	out=$(curl -sS --unix-socket "$sock" --max-time 60 -X POST http://cordon/v1/runs \
		-d "{\"policy\": $pol, \"argv\": [\"/bin/sh\", \"-c\", \"pwd; cat /etc/os-release; echo x >made\"]}")
	R=$T_TMP/serve-run.json
	printf '%s\n' "$out" >"$R"
	expect_eq "$(field .status)" ok "the run through serve (stderr: $(field .run.stderr_b64 | base64 -d))"
	expect_match "$(field .run.stdout_b64 | base64 -d)" '^/testbed$' "the image's workspace"
	expect_match "$(field .run.stdout_b64 | base64 -d)" '^ID=cordon-test-image$' "the image's root"
	expect_eq "$(field .image_workspace)" /testbed "the report's image_workspace"
	[ ! -e "$img/testbed/made" ] || fail "the run's file reached the image"
	# Another user may name as root only what it may read: not a tree it
	# may search but not list (0711: cordon's own checks let it through).
	mkdir -m 755 "$T_TMP/priv"
	make_image "$T_TMP/priv/img"
	chmod 711 "$T_TMP/priv/img"
	out=$(setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS --unix-socket "$sock" --max-time 60 \
		-w ' %{http_code}' -X POST http://cordon/v1/runs \
		-d "{\"policy\": {\"root\": \"$T_TMP/priv/img\"}, \"argv\": [\"/bin/true\"]}" | tr -d '\n')
	expect_match "$out" "root: $T_TMP/priv/img: uid 65534 may not read it.* 403$" "a root the client cannot read"
	kill -TERM "$srv"
	wait "$srv"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_'); do t_run "$t"; done
