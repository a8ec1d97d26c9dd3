# cordon-oci against the runtime-spec, one behaviour a test, each the one an
# OCI runtime-tools validation program checks (make test-oci; the program
# named in each test's comment): device nodes, hooks and their failures,
# the process's user, mount order and propagation, kill's signals. Each runs
# on a busybox bundle the test makes.
#   BUILD=$PWD/build bash tests/oci/spec.sh
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"

# bundle DIR [ARGS...]: a busybox rootfs (busybox-static) and a config.json
# with its own pid, mount, ipc, uts and network namespaces, /proc and a /dev
# tmpfs; cfg FILTER then edits it with jq.
bundle() { oci_bundle "$1" oci-spec "sh echo cat id sleep ls touch stat grep awk" '["CAP_CHOWN","CAP_KILL","CAP_SETUID","CAP_SETGID","CAP_SYS_ADMIN"]' "net" "${@:2}"; }
cfg() { jq "$@" "$B/config.json" >"$B/c.json" && mv "$B/c.json" "$B/config.json"; }

setup_oci() { oci_setup s && { [ "$(id -u)" = 0 ] || t_skip "not root"; }; }

# killsig: a config that denies every device (the suite's default config
# does) still leaves the default devices usable, as crun and runc do: a
# shell's `cmd &` opens /dev/null. Then kill by name and by number.
test_deny_all_devices_keeps_default_devices_and_kill_signals() {
	setup_oci || return
	cg1_has devices || { t_skip "no cgroup v1 devices controller (device rules are v1's here)"; return; }
	bundle "$B" sh -c "trap 'touch /got-USR1' USR1; trap 'touch /got-USR2' USR2; sleep 1000 & touch /ready; wait \$!; wait \$!; wait \$!"
	cfg '.linux.resources.devices = [{allow: false, access: "rwm"}]'
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci start "$ID"
	expect_eq "$RC" 0 "start: $ERR"
	wait_for "$B/rootfs/ready" || fail "the container's shell never got past \`sleep &\`: $(cat "$T_TMP/out")"
	oci kill "$ID" USR1
	expect_eq "$RC" 0 "kill USR1: $ERR"
	wait_for "$B/rootfs/got-USR1" || fail "no USR1 reached the container's process"
	oci kill "$ID" 12
	expect_eq "$RC" 0 "kill 12: $ERR"
	wait_for "$B/rootfs/got-USR2" || fail "no signal 12 (USR2) reached the container's process"
	oci delete --force "$ID"
	expect_eq "$RC" 0 "delete --force: $ERR"
	t_assert
}

# hooks_stdin: prestart hooks get the state, status "created" (as crun).
test_prestart_hook_gets_created_state() {
	setup_oci || return
	bundle "$B" sh -c 'exit 0'
	cfg --arg f "$T_TMP/prestart" '.hooks.prestart = [{path: "/bin/sh", args: ["sh", "-c", "cat > \($f)"]}] |
	     .annotations = {"a.b": "c"}'
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci state "$ID"
	local pid
	pid=$(jq -r .pid <<<"$OUT")
	expect_eq "$(jq -r .status "$T_TMP/prestart" 2>&1)" created "the prestart hook's status"
	expect_eq "$(jq -r .pid "$T_TMP/prestart" 2>&1)" "$pid" "the prestart hook's pid"
	expect_eq "$(jq -r '.annotations["a.b"]' "$T_TMP/prestart" 2>&1)" c "the prestart hook's annotations"
	oci delete --force "$ID"
	t_assert
}

# poststart_fail, poststop_fail: a failing poststart or poststop hook is a
# warning; the hooks after it run, and start and delete succeed.
test_failing_poststart_and_poststop_hooks_are_warnings() {
	setup_oci || return
	bundle "$B" sleep 1000
	cfg --arg f "$T_TMP/out" '.hooks.poststart = [{path: "/bin/false"}, {path: "/bin/sh", args: ["sh", "-c", "echo post-start >> \($f)"]}] |
	     .hooks.poststop = [{path: "/bin/false"}, {path: "/bin/sh", args: ["sh", "-c", "echo post-stop >> \($f)"]}]'
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci start "$ID"
	expect_eq "$RC" 0 "start with a failing poststart hook: $ERR"
	expect_match "$ERR" '^cordon-oci: warning: poststart hook /bin/false failed \(exit status 1\)$' "start's warning"
	expect_eq "$(cat "$T_TMP/out" 2>&1)" post-start "the poststart hook after the failing one"
	oci state "$ID"
	expect_eq "$(jq -r .status <<<"$OUT")" running "the container after the failing poststart hook"
	oci delete --force "$ID"
	expect_eq "$RC" 0 "delete with a failing poststop hook: $ERR"
	expect_match "$ERR" '^cordon-oci: warning: poststop hook /bin/false failed \(exit status 1\)$' "delete's warning"
	expect_eq "$(cat "$T_TMP/out" 2>&1)" $'post-start\npost-stop' "the poststop hook after the failing one"
	[ ! -e "$ROOT/$ID" ] || fail "the container is left after delete"
	t_assert
}

# process_user: uid, gid and additionalGids other than 0 inside the user
# namespace, with a bounding set narrower than the full one.
test_process_user_and_groups() {
	setup_oci || return
	bundle "$B" sh -c 'id -u; id -g; id -G; umask'
	cfg '.process.user = {uid: 10, gid: 10, additionalGids: [5]} | .process.user.umask = 2'
	oci run --bundle "$B" "$ID"
	expect_eq "$RC" 0 "run as uid 10: $ERR"
	expect_eq "$OUT" $'10\n10\n10 5\n0002' "uid, gid, groups, umask inside"
	t_assert
}

# linux_devices: device nodes of the config's type, numbers, mode and owner,
# one the host lacks (10:666) among them, and a fifo; the ones the host has
# work; an owner the container does not map is not given to another id
# (it stays the overflow id).
test_linux_devices_made_as_configured() {
	setup_oci || return
	bundle "$B" sh -c 'for d in /dev/mynull /dev/test1 /dev/fifo /dev/far; do stat -c "%n %F %t:%T %a %u %g" $d; done; echo x >/dev/mynull && echo wrote'
	cfg '.linux.devices = [{path: "/dev/mynull", type: "c", major: 1, minor: 3, fileMode: 432, uid: 0, gid: 0},
	                       {path: "/dev/test1", type: "c", major: 10, minor: 666, fileMode: 416, uid: 5, gid: 6},
	                       {path: "/dev/fifo", type: "p", fileMode: 384},
	                       {path: "/dev/far", type: "p", fileMode: 384, uid: 70000, gid: 70000}]'
	oci run --bundle "$B" "$ID"
	expect_eq "$RC" 0 "run with linux.devices: $ERR"
	expect_eq "$OUT" $'/dev/mynull character special file 1:3 660 0 0\n/dev/test1 character special file a:29a 640 5 6\n/dev/fifo fifo 0:0 600 0 0\n/dev/far fifo 0:0 600 65534 65534\nwrote' "the nodes inside"
	t_assert
}

# mounts: the config's mounts appear in /proc/self/mountinfo in its order,
# binds among them (the supervisor clones a bind's source before init makes
# the others), each with its propagation.
test_mounts_in_order_with_their_propagation() {
	setup_oci || return
	mkdir -p "$WS/src" && echo hi >"$WS/src/f"
	bundle "$B" cat /proc/self/mountinfo
	cfg --arg src "$WS/src" '.mounts += [
	  {destination: "/tmp/a", type: "tmpfs", source: "tmpfs", options: ["nosuid", "shared"]},
	  {destination: "/mnt/b", source: $src, options: ["bind", "shared"]},
	  {destination: "/tmp/c", type: "tmpfs", source: "tmpfs", options: ["private"]},
	  {destination: "/mnt/d", source: $src, options: ["rbind", "unbindable"]}]'
	oci run --bundle "$B" "$ID"
	expect_eq "$RC" 0 "run: $ERR"
	expect_eq "$(awk '$5 ~ /^\/(proc|dev|tmp\/a|mnt\/b|tmp\/c|mnt\/d)$/ {print $5}' <<<"$OUT" | paste -sd' ')" \
		"/proc /dev /tmp/a /mnt/b /tmp/c /mnt/d" "the mounts' order in mountinfo"
	expect_match "$(awk '$5 == "/tmp/a"' <<<"$OUT")" ' shared:[0-9]+ ' "/tmp/a is shared"
	expect_match "$(awk '$5 == "/mnt/b"' <<<"$OUT")" ' shared:[0-9]+ ' "/mnt/b is shared"
	expect_match "$(awk '$5 == "/mnt/d"' <<<"$OUT")" ' unbindable ' "/mnt/d is unbindable"
	expect_nomatch "$(awk '$5 == "/tmp/c"' <<<"$OUT")" 'shared:|master:' "/tmp/c is private"
	t_assert
}

# linux_rootfs_propagation: an unbindable root (the default devices are
# still bound from the host) and a shared one.
test_rootfs_propagation_unbindable_and_shared() {
	setup_oci || return
	bundle "$B" cat /proc/self/mountinfo
	cfg '.linux.rootfsPropagation = "unbindable"'
	oci run --bundle "$B" "$ID"
	expect_eq "$RC" 0 "run with rootfsPropagation unbindable: $ERR"
	expect_match "$(awk '$5 == "/"' <<<"$OUT")" ' unbindable ' "the root is unbindable"
	expect_match "$(awk '$5 == "/dev/null"' <<<"$OUT")" '/null /dev/null ' "/dev/null is the host's, bound"
	cfg '.linux.rootfsPropagation = "shared"'
	oci run --bundle "$B" "$ID-2"
	expect_eq "$RC" 0 "run with rootfsPropagation shared: $ERR"
	expect_match "$(awk '$5 == "/"' <<<"$OUT")" ' shared:[0-9]+ ' "the root is shared"
	t_assert
}

# A bundle on a shared mount (a systemd host's "/" is shared): the clone of
# root.path and of a bind's source would be peers of it, so the container's
# own mounts would show in the caller's namespace, and pivot_root refuses a
# shared root. Run in a mount namespace of the test's own, with a shared
# tmpfs holding the bundle and a bind's source.
test_bundle_on_a_shared_mount_leaks_no_mount() {
	setup_oci || return
	command -v unshare >/dev/null || { t_skip "no unshare (util-linux)"; return; }
	bundle "$B" sleep 1000
	cfg --arg src "$WS/shr/src" '.mounts += [{destination: "/mnt/s", source: $src, options: ["rbind"]},
	                                         {destination: "/mnt/s/inner", type: "tmpfs", source: "tmpfs"}]'
	mkdir -p "$WS/shr"
	OUT=$(unshare -m --propagation private bash -c '
		ws=$1 oci=$2 root=$3 id=$4
		mount -t tmpfs tmpfs "$ws/shr" && mount --make-shared "$ws/shr" || exit 9
		mkdir -p "$ws/shr/src/inner" && cp -a "$ws/b" "$ws/shr/b" || exit 9
		"$oci" --root "$root" create --bundle "$ws/shr/b" "$id" </dev/null >/dev/null 2>"$ws/err"
		echo "create $? $(cat "$ws/err")"
		echo "leaked $(awk -v w="$ws/shr/" '\''index($5, w) == 1 && $5 != w "b" {print $5}'\'' /proc/self/mountinfo | paste -sd" ")"
		"$oci" --root "$root" delete --force "$id" 2>&1' sh "$WS" "$OCI" "$ROOT" "$ID" 2>&1)
	expect_eq "$(sed -n 1p <<<"$OUT")" "create 0 " "create of a bundle on a shared mount"
	expect_eq "$(sed -n 2p <<<"$OUT")" "leaked " "mounts of the container seen in the caller's namespace"
	t_assert
}

# A container's cgroup that already exists with processes in it is
# another's (as runc, create refuses it): a second --root with the same
# id (the default cgroup /cordon-oci/ID), and a cgroupsPath naming it.
test_create_refuses_a_cgroup_with_processes_in_it() {
	setup_oci || return
	bundle "$B" sleep 1000
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci start "$ID"
	local r1=$ROOT
	ROOT=$T_TMP/root2
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"; RC=$?; ERR=$(cat "$T_TMP/err")
	expect_eq "$RC" 1 "create of the same id in another --root"
	expect_match "$ERR" "cgroup .*/cordon-oci/$ID already exists and has processes in it" "the error"
	cfg --arg p "/cordon-oci/$ID" '.linux.cgroupsPath = $p'
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID-2" </dev/null >/dev/null 2>"$T_TMP/err"; RC=$?
	expect_eq "$RC" 1 "create with cgroupsPath naming a busy cgroup"
	ROOT=$r1
	oci state "$ID"
	expect_eq "$(jq -r .status <<<"$OUT")" running "the first container after the refused ones"
	oci delete --force "$ID"
	expect_eq "$RC" 0 "delete --force: $ERR"
	t_assert
}
# Outside review of cordon-oci, 6: ids that are ROOT's own entries, a gid
# map to the host's root group, an oversized config and too many mounts are
# refused at create with one line naming them, and leave nothing behind.
# Each was accepted before (the id "reports" became a container).
test_refused_ids_gid_root_and_config_bounds() {
	setup_oci || return
	bundle "$B" true
	local id
	for id in reports .hidden; do
		"$OCI" --root "$ROOT" create --bundle "$B" "$id" </dev/null >/dev/null 2>"$T_TMP/err"
		expect_eq "$?:$(grep -c 'invalid container id' "$T_TMP/err")" "1:1" "id $id: $(cat "$T_TMP/err")"
	done
	cfg '.linux.namespaces += [{type: "user"}] | .linux.uidMappings = [{containerID: 0, hostID: 200000, size: 65536}]
	     | .linux.gidMappings = [{containerID: 0, hostID: 0, size: 65536}]'
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 1 "a gid map to the host's root group"
	expect_match "$(cat "$T_TMP/err")" "gidMappings maps container gid 0 to the host's root group" "its error"
	bundle "$B" true
	cfg '.mounts += [range(0; 4097) | {destination: "/tmp/m\(.)", type: "tmpfs", source: "tmpfs"}]'
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 1 "4097 mounts"
	expect_match "$(cat "$T_TMP/err")" 'config.json:[0-9]+:[0-9]+: .*mounts.* more than 4096' "its error"
	bundle "$B" true
	head -c $((4 << 20)) /dev/zero | tr '\0' x >"$T_TMP/pad"
	cfg --rawfile pad "$T_TMP/pad" '.annotations = {pad: $pad}'
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 1 "a config over 4 MiB"
	expect_match "$(cat "$T_TMP/err")" 'larger than 4 MiB' "its error"
	expect_eq "$(ls "$ROOT" 2>/dev/null | grep -v -x -e reports | tr '\n' ' ')" "" "nothing left in the state directory"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_'); do t_run "$t"; done
echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
