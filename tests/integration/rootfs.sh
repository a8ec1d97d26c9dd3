# cordon run --rootfs DIR (policy "root"): the system view from an unpacked
# image directory, read-only, in place of the host's /usr, /etc, /bin...;
# /proc, /dev, /tmp, the workspace and the grants as always (docs/images.md).
. "$(dirname "$0")/../lib.sh"

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

for t in $(declare -F | awk '{print $3}' | grep '^test_'); do t_run "$t"; done
