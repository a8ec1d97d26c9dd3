# cordon-oci, cordon as an OCI runtime (docs/oci.md): the lifecycle on a
# busybox bundle the test makes, the container's init as state.pid, uid 0
# inside not the host's root, and bad input refused with one clear line and
# nothing left behind.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/common.sh"

# bundle DIR [ARGS...]: a busybox rootfs (busybox-static, scripts/packages/test.txt)
# and a config.json with its own pid, mount, ipc, uts and network namespaces.
bundle() { oci_bundle "$1" oci-test "sh echo cat id sleep hostname ls touch stat head wc grep" '["CAP_CHOWN","CAP_KILL"]' "net masked" "${@:2}"; }

setup_oci() { oci_setup t; }

# Nothing of container ID is left: state directory, mounts, cgroup.
nothing_left() {
	[ ! -e "$ROOT/$1" ] || fail "state directory $ROOT/$1 left behind"
	! grep -q "$WS/b" /proc/self/mountinfo || fail "a mount of the bundle left behind"
	! grep -rqs "cordon-oci/$1" /proc/self/mountinfo || true
	local d
	for d in /sys/fs/cgroup/*/cordon-oci/"$1" /sys/fs/cgroup/cordon-oci/"$1"; do
		[ ! -e "$d" ] || fail "cgroup $d left behind"
	done
}

# The host-wide uid ranges (lib/oci-slots.c): slot_of STATE_DIR prints the
# range whose file names that state directory (fails if none does).
SLOTS=/run/cordon-oci-slots
slot_of() { grep -lx "[0-9]* [0-9]* $1" "$SLOTS"/* 2>/dev/null | xargs -r -n1 basename | grep . ; }
# uid_base PID: the host uid container uid 0 is, from /proc/PID/uid_map
uid_base() { awk '$1 == 0 {print $2}' "/proc/$1/uid_map"; }
# gone PID...: waits (at most ~10 s) until none of them is alive
gone() { local p; for _ in $(seq 200); do for p; do kill -0 "$p" 2>/dev/null && break; done || return 0; sleep 0.05; done; return 1; }

test_lifecycle_create_start_state_kill_delete() {
	setup_oci || return
	bundle "$B" sh -c 'echo in-container; hostname; exec sleep 1000'
	"$OCI" --root "$ROOT" create --bundle "$B" --pid-file "$T_TMP/pid" "$ID" >"$T_TMP/out" 2>"$T_TMP/cerr"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/cerr")"
	oci state "$ID"
	expect_eq "$(jq -r .status <<<"$OUT")" created "state after create"
	local pid
	pid=$(jq -r .pid <<<"$OUT")
	expect_eq "$(cat "$T_TMP/pid")" "$pid" "the pid file is state.pid"
	[ -s "$T_TMP/out" ] && fail "the process ran before start: $(cat "$T_TMP/out")"
	oci start "$ID"
	expect_eq "$RC" 0 "start: $ERR"
	for _ in $(seq 100); do grep -q oci-test "$T_TMP/out" && break; sleep 0.05; done
	expect_eq "$(cat "$T_TMP/out")" $'in-container\noci-test' "the container's output through create's stdout"
	oci state "$ID"
	expect_eq "$(jq -r .status <<<"$OUT")" running "state after start"
	# state.pid is the workload's init, in the container's namespaces
	[ "$(readlink "/proc/$pid/ns/user")" != "$(readlink /proc/self/ns/user)" ] || fail "init shares the host's user namespace"
	[ "$(readlink "/proc/$pid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] || fail "init shares the host's pid namespace"
	expect_match "$(tr '\0' ' ' <"/proc/$pid/cmdline")" '^sleep 1000' "state.pid is the workload"
	oci delete "$ID"
	expect_eq "$RC" 1 "delete of a running container without --force fails"
	expect_match "$ERR" 'is running, not stopped \(use --force\)' "delete's message"
	kill -0 "$pid" || fail "the refused delete killed the container"
	oci kill "$ID" KILL
	expect_eq "$RC" 0 "kill: $ERR"
	for _ in $(seq 100); do oci state "$ID"; [ "$(jq -r .status <<<"$OUT")" = stopped ] && break; sleep 0.05; done
	expect_eq "$(jq -r .status <<<"$OUT")" stopped "state after kill"
	oci delete "$ID"
	expect_eq "$RC" 0 "delete: $ERR"
	nothing_left "$ID"
	oci state "$ID"
	expect_match "$ERR" "container \"$ID\" does not exist" "state after delete"
	t_assert
}

test_root_inside_is_not_host_root() {
	setup_oci || return
	bundle "$B" sh -c 'id -u; cat /proc/self/uid_map; stat -c %u /bin/busybox; touch /tmp/x && stat -c %u /tmp/x'
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	local lines
	mapfile -t lines <"$T_TMP/out"
	expect_eq "${lines[0]}" 0 "uid inside"
	local outer
	outer=$(awk '{print $2}' <<<"${lines[1]}")
	[ -n "$outer" ] && [ "$outer" != 0 ] || fail "uid 0 inside is host uid '$outer'"
	expect_eq "${lines[2]}" 0 "the image's root-owned files are root's inside (idmapped)"
	expect_eq "$(stat -c %u "$B/rootfs/tmp/x")" 0 "a file uid 0 made inside is root's on disk through the idmapped root"
	nothing_left "$ID"
	t_assert
}

test_bad_input_one_line_nothing_left() {
	setup_oci || return
	bundle "$B" true
	oci frobnicate "$ID"
	expect_eq "$RC" 1 "unknown verb"
	expect_eq "$ERR" 'cordon-oci: unknown verb "frobnicate" (cordon-oci --help)' "unknown verb's line"
	oci --bogus state "$ID"
	expect_eq "$RC" 1 "unknown global option"
	expect_match "$ERR" '^cordon-oci: unknown global option --bogus' "unknown option's line"
	# missing and malformed config.json
	mv "$B/config.json" "$B/c.json"
	oci create --bundle "$B" "$ID"
	expect_eq "$RC" 1 "missing config.json"
	expect_match "$ERR" "^cordon-oci: create: $B/config.json: No such file or directory$" "missing config's line"
	nothing_left "$ID"
	printf '{\n  "ociVersion": "1.0.2",\n  "root": {"path": "rootfs",}\n}\n' >"$B/config.json"
	oci create --bundle "$B" "$ID"
	expect_eq "$RC" 1 "malformed config.json"
	expect_match "$ERR" "^cordon-oci: create: $B/config.json: 3:[0-9]+: " "malformed config names file:line:col"
	expect_eq "$(printf '%s\n' "$ERR" | wc -l)" 1 "one line"
	nothing_left "$ID"
	jq '.process.args = 5' "$B/c.json" >"$B/config.json"
	oci create --bundle "$B" "$ID"
	expect_match "$ERR" "^cordon-oci: create: $B/config.json:[0-9]+:[0-9]+: \"args\" must be array" "a wrong type names file:line:col"
	nothing_left "$ID"
	# a rootfs that is a symlink
	mv "$B/c.json" "$B/config.json"
	mv "$B/rootfs" "$B/real"
	ln -s real "$B/rootfs"
	oci create --bundle "$B" "$ID"
	expect_eq "$RC" 1 "symlinked rootfs"
	expect_match "$ERR" "root.path $B/rootfs is a symbolic link" "symlink's line"
	nothing_left "$ID"
	rm "$B/rootfs"
	mv "$B/real" "$B/rootfs"
	# an id that exists, one that does not
	jq '.process.args = ["sleep", "1000"]' "$B/config.json" >"$B/c2" && mv "$B/c2" "$B/config.json"
	# not through oci's $(...): the container's init holds create's stdout
	# (as with runc) until it exits, so a $(...) would wait for the delete below
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci create --bundle "$B" "$ID"
	expect_eq "$RC" 1 "an id that exists"
	expect_eq "$ERR" "cordon-oci: create: container \"$ID\" already exists" "existing id's line"
	oci state "$ID"
	expect_eq "$(jq -r .status <<<"$OUT")" created "the first container is untouched"
	oci start "nope-$ID"
	expect_eq "$ERR" "cordon-oci: start: container \"nope-$ID\" does not exist" "missing id's line"
	oci kill "nope-$ID"
	expect_eq "$RC" 1 "kill of a missing id"
	# delete of a created container without --force is refused; --force leaves nothing
	oci delete "$ID"
	expect_eq "$RC" 1 "delete of a created container without --force"
	expect_match "$ERR" 'is created, not stopped' "its line"
	oci delete --force "$ID"
	expect_eq "$RC" 0 "delete --force: $ERR"
	nothing_left "$ID"
	! slot_of "$ROOT/$ID" >/dev/null || fail "a uid range left taken: $SLOTS/$(slot_of "$ROOT/$ID")"
	t_assert
}

# Of create's descriptors only stdio and --preserve-fds reach the container,
# and the detached supervisor keeps none: a pipe the caller inherited (a
# $(...) or `| tee` around it) sees its EOF when create exits.
test_create_keeps_no_caller_descriptor() {
	setup_oci || return
	bundle "$B" sleep 1000
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err" 7>"$T_TMP/extra"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	local held
	held=$(find /proc/[0-9]*/fd -lname "$T_TMP/extra" 2>/dev/null)
	expect_eq "$held" "" "create's fd 7 is held after create exited"
	"$OCI" --root "$ROOT" create --preserve-fds 1 --bundle "$B" "$ID-p" </dev/null >/dev/null 2>"$T_TMP/err" 3>"$T_TMP/kept"
	expect_eq "$?" 0 "create --preserve-fds 1: $(cat "$T_TMP/err")"
	oci state "$ID-p"
	local pid
	pid=$(jq -r .pid <<<"$OUT")
	held=$(find /proc/[0-9]*/fd -lname "$T_TMP/kept" 2>/dev/null)
	expect_eq "$held" "/proc/$pid/fd/3" "--preserve-fds 1: fd 3 is init's alone"
	oci delete --force "$ID"
	oci delete --force "$ID-p"
	t_assert
}

test_features_and_log_json() {
	setup_oci || return
	oci features
	expect_eq "$RC" 0 "features"
	expect_eq "$(jq -r '.linux.namespaces | index("user") != null' <<<"$OUT")" true "features lists the user namespace"
	expect_eq "$(jq -r '.linux.seccomp.enabled' <<<"$OUT")" true "features: seccomp"
	"$OCI" --root "$ROOT" --log "$T_TMP/log" --log-format json start nope >/dev/null 2>&1
	expect_eq "$(jq -r 'select(.level == "error") | .msg' "$T_TMP/log")" 'start: container "nope" does not exist' "the json log's error line"
	expect_match "$(jq -r .time "$T_TMP/log")" '^20[0-9-]+T' "the json log's time"
	t_assert
}

# A bind whose source init cannot reach (a tmpfs below a 0700 directory, as
# podman's userdata/shm for /dev/shm): the supervisor clones it, and its
# kind (directory or file) comes from that clone, not from a stat of the
# path by init (EACCES: the target was made a file, and move_mount of a
# directory onto it failed with EINVAL).
test_bind_source_init_cannot_reach() {
	setup_oci || return
	bundle "$B" sh -c 'cat /dev/shm/f; stat -c %F /dev/shm; cat /etc/extra'
	mkdir -m 700 "$WS/private"
	mkdir "$WS/private/shm"
	mount -t tmpfs -o mode=1777,size=1m tmpfs "$WS/private/shm" || { t_skip "cannot mount a tmpfs"; return; }
	echo in-tmpfs >"$WS/private/shm/f"
	echo a-file >"$WS/private/extra"
	jq --arg d "$WS/private/shm" --arg f "$WS/private/extra" '.mounts += [
	  {destination: "/dev/shm", type: "bind", source: $d, options: ["bind", "rprivate", "nosuid", "noexec", "nodev"]},
	  {destination: "/etc/extra", type: "bind", source: $f, options: ["bind", "rprivate"]}]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	expect_eq "$(cat "$T_TMP/out")" $'in-tmpfs\ndirectory\na-file' "the tmpfs and the file, bound from below a 0700 directory"
	nothing_left "$ID"
	t_assert
}

# An engine's "deny all" device rule (podman's linux.resources.devices)
# leaves the default devices and the pty usable, as with runc and crun: the
# runtime allows them after the config's rules (v1 devices controller).
test_device_deny_all_keeps_default_devices() {
	setup_oci || return
	awk '$9 == "cgroup" && $NF ~ /(^|,)devices(,|$)/ {f=1} END {exit !f}' /proc/self/mountinfo ||
		{ t_skip "no cgroup v1 devices controller (cordon-oci writes device rules there only)"; return; }
	bundle "$B" sh -c 'head -c 3 /dev/zero | wc -c; echo x >/dev/null && echo null-ok'
	jq '.linux.resources.devices = [{allow: false, access: "rwm"}]' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	expect_eq "$(tr -d ' ' <"$T_TMP/out")" $'3\nnull-ok' "/dev/zero and /dev/null under a deny-all rule"
	nothing_left "$ID"
	t_assert
}

# exec --detach, as conmon and containerd's shim run it (a subreaper that
# then waits for the pid in --pid-file): the process is exec's own child,
# so once exec has returned it is the subreaper's, which reaps it and gets
# its exit status (a grandchild would be reaped by exec's child instead).
test_exec_detach_reaped_by_the_caller() {
	setup_oci || return
	bundle "$B" sleep 1000
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci start "$ID"
	expect_eq "$RC" 0 "start: $ERR"
	OUT=$(python3 - "$OCI" "$ROOT" "$ID" "$T_TMP/exec.pid" <<-'EOF' 2>&1
		import ctypes, os, subprocess, sys
		oci, root, cid, pidf = sys.argv[1:]
		ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
		r = subprocess.run([oci, "--root", root, "exec", "--detach", "--pid-file", pidf, cid,
		                    "sh", "-c", "exit 7"], stdin=subprocess.DEVNULL, timeout=60)
		if r.returncode:
		    sys.exit("exec --detach: status %d" % r.returncode)
		pid = int(open(pidf).read())
		try:
		    _, st = os.waitpid(pid, 0)
		except ChildProcessError:
		    sys.exit("the pid file's process %d is not the caller's to reap" % pid)
		print(os.waitstatus_to_exitcode(st))
	EOF
	)
	expect_eq "$OUT" 7 "the subreaper reaps the exec'd process and has its status"
	oci exec "$ID" sh -c 'exit 5'
	expect_eq "$RC" 5 "exec without --detach exits with the process's status"
	oci delete --force "$ID"
	nothing_left "$ID"
	t_assert
}

# A process.user other than root keeps the capabilities its config names:
# the bounding set is dropped before the uid changes (after it, CAP_SETPCAP
# is no longer effective: "dropping N from the bounding set: EPERM").
test_user_not_root_bounding_set() {
	setup_oci || return
	bundle "$B" sh -c 'id -u; grep ^CapBnd: /proc/self/status'
	jq '.process.user = {uid: 1000, gid: 1000}' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	# CAP_CHOWN (0) and CAP_KILL (5), the bundle's bounding set
	expect_eq "$(tr -s '\t ' ' ' <"$T_TMP/out")" $'1000\nCapBnd: 0000000000000021' "uid 1000 with the config's bounding set"
	nothing_left "$ID"
	t_assert
}

# A bind is idmapped with the container's user namespace, as the root is:
# root inside owns what the host's root owns in a volume and writes there
# as the host's root (what an engine's -v expects of root in a container;
# with runc and crun it is the host's root itself).
test_bind_is_idmapped() {
	setup_oci || return
	bundle "$B" sh -c 'stat -c %u /vol/f; echo new >/vol/new && echo written'
	mkdir "$WS/vol"
	echo host >"$WS/vol/f"
	jq --arg d "$WS/vol" '.mounts += [{destination: "/vol", type: "bind", source: $d, options: ["rbind", "rw"]}]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	expect_eq "$(cat "$T_TMP/out")" $'0\nwritten' "the host root's file is root's inside, and root writes there"
	expect_eq "$(stat -c %u "$WS/vol/new" 2>&1)" 0 "what root wrote is the host's root's on disk"
	nothing_left "$ID"
	t_assert
}

# exec --tty --console-socket (podman exec -it): the process gets a pty of
# the container's devpts as its controlling terminal and stdio; the master
# goes to the console socket. A python receiver plays conmon.
test_exec_tty_console_socket() {
	setup_oci || return
	bundle "$B" sleep 1000
	jq '.mounts += [{destination: "/dev/pts", type: "devpts", source: "devpts",
	  options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]}]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci start "$ID"
	OUT=$(python3 - "$OCI" "$ROOT" "$ID" "$T_TMP/console.sock" <<-'EOF' 2>&1
		import os, socket, subprocess, sys
		oci, root, cid, path = sys.argv[1:]
		srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
		srv.bind(path)
		srv.listen(1)
		p = subprocess.Popen([oci, "--root", root, "exec", "--tty", "--console-socket", path, cid,
		                      "sh", "-c", "tty; test -t 0 && test -t 1 && echo is-a-tty; exit 3"],
		                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
		srv.settimeout(0.2)
		conn = None
		while conn is None:  # until the pty comes, or exec ends without sending one
		    try:
		        conn, _ = srv.accept()
		    except TimeoutError:
		        if p.poll() is not None:
		            sys.exit("no pty on the console socket; exec: status %d %s" % (p.returncode, p.stderr.read().decode().strip()))
		_, fds, _, _ = socket.recv_fds(conn, 64, 1)
		out = b""
		while True:
		    try:
		        b = os.read(fds[0], 4096)
		    except OSError:  # EIO: the pty's last peer closed
		        break
		    if not b:
		        break
		    out += b
		_, err = p.communicate(timeout=60)
		print(out.decode().replace("\r", ""), end="")
		print("status", p.returncode, err.decode().strip())
	EOF
	)
	expect_match "$OUT" '^/dev/pts/[0-9]+$' "the process's stdin is a pty of the container's devpts"
	expect_match "$OUT" '^is-a-tty$' "stdin and stdout are the terminal"
	expect_match "$OUT" '^status 3 $' "exec exits with the process's status"
	oci delete --force "$ID"
	nothing_left "$ID"
	t_assert
}

# The annotation run.cordon.report's file is written as the host's root when
# init exits, and its path may lead into the rootfs the container writes: the
# directory is opened at create time and the file made within it, never
# through a link the container put at a component of the path or at the name.
test_report_annotation_follows_no_link_the_container_made() {
	setup_oci || return
	mkdir -p "$WS/victim-dir"
	echo keep >"$WS/victim-file"
	# the container makes its /out a link to a host directory
	bundle "$B" sh -c "busybox rm -rf /out; busybox ln -s /../../../../..$WS/victim-dir /out"
	mkdir -p "$B/rootfs/out"
	jq --arg r "$B/rootfs/out/report.json" '.annotations = {"run.cordon.report": $r}' "$B/config.json" >"$B/c" &&
		mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	[ -e "$ROOT/reports/$ID.json" ] || fail "no report under ROOT/reports"
	[ -L "$B/rootfs/out" ] || fail "the container did not make /out a link"
	[ ! -e "$WS/victim-dir/report.json" ] ||
		fail "the report was written through the container's link: $(stat -c '%U %n' "$WS/victim-dir/report.json")"
	# the container makes the name itself (and the temporary names of old) links
	local id2=$ID-2
	rm -rf "$B/rootfs/out"
	mkdir -p "$B/rootfs/out"
	jq --argjson a "$(jq -cn --arg v "$WS/victim-file" '["sh", "-c", "for n in report.json report.json.tmp; do busybox ln -s /../../../../..\($v) /out/$n; done"]')" \
		'.process.args = $a' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" run --bundle "$B" "$id2" >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	[ -e "$ROOT/reports/$id2.json" ] || fail "no report under ROOT/reports"
	expect_eq "$(cat "$WS/victim-file")" keep "the file a link at the report's name pointed to"
	[ -f "$B/rootfs/out/report.json" ] && [ ! -L "$B/rootfs/out/report.json" ] ||
		fail "the report did not replace the container's link"
	expect_eq "$(jq -r .schema "$B/rootfs/out/report.json" 2>&1)" cordon.report/1 "the report at the annotation's path"
	nothing_left "$ID"
	nothing_left "$id2"
	t_assert
}

# --pid-file's directory may be a local user's: a link there at the temporary
# name must not make cordon-oci (root) truncate the file it points to. The old
# name was PATH.tmp<pid>: links planted at every pid likely next.
test_pid_file_follows_no_planted_link() {
	setup_oci || return
	bundle "$B" sh -c 'exec sleep 1000'
	local d=$WS/piddir
	mkdir -p "$d"
	echo keep >"$WS/victim"
	python3 - "$d/pid" "$WS/victim" <<-'EOF'
		import os, sys
		last = int(open("/proc/sys/kernel/ns_last_pid").read())
		for p in range(last + 1, last + 20001):
		    os.symlink(sys.argv[2], "%s.tmp%d" % (sys.argv[1], p))
	EOF
	# create's stdout is the container's: not a $(...) that would wait for it
	"$OCI" --root "$ROOT" create --bundle "$B" --pid-file "$d/pid" "$ID" >"$T_TMP/out" 2>"$T_TMP/cerr"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/cerr")"
	expect_eq "$(cat "$WS/victim")" keep "the file a planted link pointed to"
	oci state "$ID"
	expect_eq "$(cat "$d/pid" 2>&1)" "$(jq -r .pid <<<"$OUT")" "the pid file is state.pid"
	[ ! -L "$d/pid" ] || fail "the pid file is a link"
	"$OCI" --root "$ROOT" exec --detach --pid-file "$d/pid" "$ID" sleep 1000 >/dev/null 2>"$T_TMP/eerr"
	expect_eq "$?" 0 "exec: $(cat "$T_TMP/eerr")"
	expect_eq "$(cat "$WS/victim")" keep "the file a planted link pointed to (exec)"
	[ -f "$d/pid" ] && [ ! -L "$d/pid" ] || fail "exec's pid file"
	oci delete --force "$ID"
	expect_eq "$RC" 0 "delete: $ERR"
	nothing_left "$ID"
	t_assert
}

# Two cordon-oci with state directories of their own (podman's and
# containerd's --root differ) still give their containers disjoint host uid
# and gid ranges: the ranges are taken host-wide, not per --root.
test_two_roots_get_disjoint_uid_ranges() {
	setup_oci || return
	bundle "$B" sleep 1000
	local r2=$T_TMP/root2 p1 p2 b1 b2
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create under $ROOT: $(cat "$T_TMP/err")"
	"$OCI" --root "$r2" create --bundle "$B" "$ID-2" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create under $r2: $(cat "$T_TMP/err")"
	oci state "$ID"
	p1=$(jq -r .pid <<<"$OUT")
	OUT=$("$OCI" --root "$r2" state "$ID-2")
	p2=$(jq -r .pid <<<"$OUT")
	b1=$(uid_base "$p1")
	b2=$(uid_base "$p2")
	[ -n "$b1" ] && [ -n "$b2" ] || fail "no uid_map of $p1 or $p2"
	[ "$b1" != 0 ] && [ "$b2" != 0 ] || fail "a container's uid 0 is the host's"
	# each range is 65536 ids: disjoint when their bases are that far apart
	[ $((b1 > b2 ? b1 - b2 : b2 - b1)) -ge 65536 ] || fail "the two containers share host uids: bases $b1 and $b2"
	local g1 g2
	g1=$(awk '$1 == 0 {print $2}' "/proc/$p1/gid_map")
	g2=$(awk '$1 == 0 {print $2}' "/proc/$p2/gid_map")
	[ $((g1 > g2 ? g1 - g2 : g2 - g1)) -ge 65536 ] || fail "the two containers share host gids: bases $g1 and $g2"
	slot_of "$ROOT/$ID" >/dev/null || fail "no range in $SLOTS names $ROOT/$ID"
	oci delete --force "$ID"
	expect_eq "$RC" 0 "delete: $ERR"
	"$OCI" --root "$r2" delete --force "$ID-2" || fail "delete under $r2"
	! slot_of "$ROOT/$ID" >/dev/null || fail "delete left $ROOT/$ID's range taken"
	! slot_of "$r2/$ID-2" >/dev/null || fail "delete left $r2/$ID-2's range taken"
	nothing_left "$ID"
	t_assert
}

# A range whose container is gone without a delete (its supervisor and init
# killed, its state directory removed) is stale: the next create takes it
# again. One of a container that lives is never taken (the test above).
test_stale_uid_range_is_reclaimed() {
	setup_oci || return
	bundle "$B" sleep 1000
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	local pid sup base slot
	pid=$(jq -r .pid "$ROOT/$ID/state.json")
	sup=$(jq -r .supervisor "$ROOT/$ID/state.json")
	base=$(uid_base "$pid")
	slot=$(slot_of "$ROOT/$ID") || fail "no range names $ROOT/$ID"
	expect_eq "$base" "$((0x40000000 + slot * 65536))" "the range file is the container's uid_map"
	kill -KILL "$pid" "$sup"
	gone "$pid" "$sup" || fail "the container did not go"
	rm -rf "${ROOT:?}/$ID"
	local d
	for d in /sys/fs/cgroup/*/cordon-oci/"$ID" /sys/fs/cgroup/cordon-oci/"$ID"; do [ ! -d "$d" ] || rmdir "$d"; done
	expect_eq "$(slot_of "$ROOT/$ID")" "$slot" "the stale range is still on disk"
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID-b" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci state "$ID-b"
	# the lowest free range is taken: the stale one, unless another user of
	# cordon-oci on this host freed a lower one meanwhile (ranges are
	# host-wide; CI runs this alone)
	local now
	now=$(slot_of "$ROOT/$ID-b")
	if [ -n "$now" ] && [ "$now" -lt "$slot" ] && slot_of "$ROOT/$ID" >/dev/null; then
		oci delete --force "$ID-b"
		t_skip "range $now below the stale $slot came free meanwhile (another cordon-oci on this host)"
		return
	fi
	expect_eq "$(uid_base "$(jq -r .pid <<<"$OUT")")" "$base" "the new container's range (the stale one, reclaimed)"
	! slot_of "$ROOT/$ID" >/dev/null || fail "range $slot still names the gone container"
	expect_eq "$now" "$slot" "range $slot's owner"
	oci delete --force "$ID-b"
	expect_eq "$RC" 0 "delete: $ERR"
	nothing_left "$ID-b"
	t_assert
}

# A state directory another user could write (or own) would let them plant
# what later verbs trust (state.json's pid, sup.sock, config.json): refused,
# with one line naming the directory, and nothing made. A sticky directory
# (/tmp) may hold it when the entry in it is root's.
test_unsafe_root_is_refused() {
	setup_oci || return
	bundle "$B" echo done
	mkdir -m 0777 "$WS/open"
	chmod 0777 "$WS/open"
	ROOT=$WS/open/root oci create --bundle "$B" "$ID"
	expect_eq "$RC" 1 "a root below a 0777 directory"
	expect_match "$ERR" "^cordon-oci: create: --root $WS/open/root: $WS/open \\(uid 0, mode 0777\\) is writable by other users and not sticky: " "its line"
	expect_eq "$(printf '%s\n' "$ERR" | wc -l)" 1 "one line"
	[ ! -e "$WS/open/root" ] || fail "the refused create made $WS/open/root"
	! slot_of "$WS/open/root/$ID" >/dev/null || fail "the refused create took a range"
	mkdir -m 0777 "$WS/r777"
	chmod 0777 "$WS/r777"
	ROOT=$WS/r777 oci create --bundle "$B" "$ID"
	expect_match "$ERR" "^cordon-oci: create: --root $WS/r777: $WS/r777 \\(uid 0, mode 0777\\) is writable by other users: " "a 0777 root"
	[ -z "$(ls -A "$WS/r777")" ] || fail "the refused create made $(ls -A "$WS/r777")"
	mkdir -m 0700 "$WS/nob"
	chown 65534:65534 "$WS/nob"
	ROOT=$WS/nob oci create --bundle "$B" "$ID"
	expect_match "$ERR" "^cordon-oci: create: --root $WS/nob: $WS/nob \\(uid 65534, mode 0700\\) is owned by another user: " "a root nobody owns"
	[ -z "$(ls -A "$WS/nob")" ] || fail "the refused create made $(ls -A "$WS/nob")"
	# the later verbs refuse it too (state, list, delete read what is in it)
	ROOT=$WS/nob oci state "$ID"
	expect_match "$ERR" "^cordon-oci: state: --root $WS/nob: .* is owned by another user" "state under a root nobody owns"
	ROOT=$WS/nob oci list
	expect_eq "$RC" 1 "list under a root nobody owns"
	# a link is followed, and where it leads checked the same
	ln -s "$WS/open" "$WS/link"
	ROOT=$WS/link/root oci create --bundle "$B" "$ID"
	expect_match "$ERR" "is writable by other users and not sticky" "a root through a link to a 0777 directory"
	[ ! -e "$WS/open/root" ] || fail "the refused create made $WS/open/root through the link"
	# sticky: root's entry is fine, another user's is not
	mkdir -m 1777 "$WS/sticky"
	chmod 1777 "$WS/sticky"
	mkdir -m 0755 "$WS/sticky/theirs"
	chown 65534 "$WS/sticky/theirs"
	ROOT=$WS/sticky/theirs/root oci create --bundle "$B" "$ID"
	expect_match "$ERR" "$WS/sticky/theirs \\(uid 65534, mode 0755\\) is another user's, in a directory others write" "another user's entry of a sticky directory"
	ROOT=$WS/sticky/root oci run --bundle "$B" "$ID"
	expect_eq "$RC" 0 "a root-owned root in a sticky directory: $ERR"
	expect_eq "$(stat -c '%u %a' "$WS/sticky/root")" "0 700" "the root made, root's and 0700"
	t_assert
}

# start, exec and delete use the config.json create read (kept in ROOT/ID,
# written as a new file), never the bundle's again: whoever may write the
# bundle between create and start changes neither the process, nor the
# poststart and poststop hooks, nor what exec's processes get.
test_config_changed_after_create_changes_nothing() {
	setup_oci || return
	bundle "$B" sh -c 'echo original; exec sleep 1000'
	local h=$T_TMP/hooks
	jq --arg h "$h" '.hooks.poststart = [{path: "/bin/sh", args: ["sh", "-c", "echo start-as-created >> \($h)"]}] |
	    .hooks.poststop = [{path: "/bin/sh", args: ["sh", "-c", "echo stop-as-created >> \($h)"]}]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >"$T_TMP/out" 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	[ -f "$ROOT/$ID/config.json" ] && [ ! -L "$ROOT/$ID/config.json" ] || fail "no config.json kept in $ROOT/$ID"
	jq --arg h "$h" '.process.args = ["sh", "-c", "echo replaced"] | .process.env += ["FOO=planted"] |
	    .hooks.poststart = [{path: "/bin/sh", args: ["sh", "-c", "echo start-planted >> \($h)"]}] |
	    .hooks.poststop = [{path: "/bin/sh", args: ["sh", "-c", "echo stop-planted >> \($h)"]}]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	oci start "$ID"
	expect_eq "$RC" 0 "start: $ERR"
	for _ in $(seq 100); do [ -s "$T_TMP/out" ] && break; sleep 0.05; done
	expect_eq "$(cat "$T_TMP/out")" original "what start ran"
	oci exec "$ID" sh -c 'echo "FOO=${FOO:-unset}"'
	expect_eq "$OUT" "FOO=unset" "exec's process environment"
	oci delete --force "$ID"
	expect_eq "$RC" 0 "delete: $ERR"
	expect_eq "$(cat "$h" 2>&1)" $'start-as-created\nstop-as-created' "the hooks that ran"
	nothing_left "$ID"
	t_assert
}

# ROOT/reports keeps the 64 newest reports; the retention removes the
# oldest through the directory's own descriptor: a link put at
# ROOT/reports is not followed to remove files where it points.
test_report_retention_follows_no_link() {
	setup_oci || return
	bundle "$B" echo done
	mkdir -p "$WS/victim" "$ROOT"
	local i
	for i in $(seq 70); do echo keep >"$WS/victim/f$i.json"; done
	ln -s "$WS/victim" "$ROOT/reports"
	"$OCI" --root "$ROOT" run --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "run: $(cat "$T_TMP/err")"
	expect_eq "$(ls "$WS/victim" | wc -l)" 70 "the files where ROOT/reports's link points"
	[ ! -e "$WS/victim/$ID.json" ] || fail "the report was written through the link"
	nothing_left "$ID"
	t_assert
}

# Namespaces joined by path (lib/oci-nsjoin.c, docs/oci.md): the pod case.
# pod_a DIR ID: container A, a pause (sleep) with a user namespace of its
# own and hostname pod-a, started; sets PIDA.
pod_a() {
	bundle "$1" sh -c 'echo a > /a-only; exec sleep 1000'
	jq '.hostname = "pod-a"' "$1/config.json" >"$1/c" && mv "$1/c" "$1/config.json"
	"$OCI" --root "$ROOT" create --bundle "$1" "$2" </dev/null >/dev/null 2>"$T_TMP/err" ||
		{ fail "create A: $(cat "$T_TMP/err")"; return 1; }
	oci start "$2"
	PIDA=$(jq -r .pid "$ROOT/$2/state.json")
	wait_for "$1/rootfs/a-only" || { fail "A never ran: $ERR"; oci delete --force "$2"; return 1; }
}
# join_a DIR NS...: DIR's config joins A's namespaces NS (spec names) by
# path, sets none of its own of those kinds, and no hostname.
join_a() {
	local dir=$1 ns
	shift
	for ns; do
		local p=$ns
		[ "$ns" = network ] && p=net
		[ "$ns" = mount ] && p=mnt
		jq --arg t "$ns" --arg p "/proc/$PIDA/ns/$p" \
			'.linux.namespaces = [(.linux.namespaces[] | select(.type != $t)), {type: $t, path: $p}] | del(.hostname)' \
			"$dir/config.json" >"$dir/c" && mv "$dir/c" "$dir/config.json"
	done
}

# The CRI annotations alone do not put a container in another's user
# namespace: B names running A as its sandbox but joins none of A's
# namespaces, and gets a user namespace (and host id range) of its own;
# once it joins A's network namespace by path, it is in A's pod and gets
# A's user namespace (outside review 4, F2).
test_pod_annotations_alone_join_nothing() {
	setup_oci || return
	local ida=$ID-a idb=$ID-b idc=$ID-c pidb pidc
	pod_a "$WS/a" "$ida" || return
	bundle "$B" sh -c 'exec sleep 1000'
	jq --arg sb "$ida" '.annotations["io.kubernetes.cri.container-type"] = "container" |
		.annotations["io.kubernetes.cri.sandbox-id"] = $sb' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" create --bundle "$B" "$idb" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create B: $(cat "$T_TMP/err")"
	pidb=$(jq -r .pid "$ROOT/$idb/state.json")
	[ "$(readlink "/proc/$pidb/ns/user")" != "$(readlink "/proc/$PIDA/ns/user")" ] ||
		fail "B, which joins none of A's namespaces, is in A's user namespace"
	[ -n "$(slot_of "$ROOT/$idb")" ] || fail "B has no host id range of its own"
	oci delete --force "$idb"
	local C=$WS/c
	bundle "$C" sh -c 'exec sleep 1000'
	jq --arg sb "$ida" '.annotations["io.kubernetes.cri.container-type"] = "container" |
		.annotations["io.kubernetes.cri.sandbox-id"] = $sb' "$C/config.json" >"$C/c" && mv "$C/c" "$C/config.json"
	join_a "$C" network
	"$OCI" --root "$ROOT" create --bundle "$C" "$idc" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create C: $(cat "$T_TMP/err")"
	pidc=$(jq -r .pid "$ROOT/$idc/state.json")
	expect_eq "$(readlink "/proc/$pidc/ns/user")" "$(readlink "/proc/$PIDA/ns/user")" "C, in A's network namespace, is in A's user namespace"
	oci delete --force "$idc"
	oci delete --force "$ida"
	t_assert
}

# Container B joins A's user, network and uts namespaces by /proc/PID/ns
# paths: its uid_map is A's, its hostname A's, it is not the host's root,
# no host id range is taken for it; deleting both leaves nothing.
test_pod_joins_user_net_uts_by_path() {
	setup_oci || return
	local ida=$ID-a idb=$ID-b pidb
	pod_a "$WS/a" "$ida" || return
	bundle "$B" sh -c 'cat /proc/self/uid_map > /um; hostname > /hn; exec sleep 1000'
	join_a "$B" user network uts
	OUT=$("$CORDON" explain --bundle "$B" 2>"$T_TMP/err")
	expect_eq "$?" 0 "explain --bundle: $(cat "$T_TMP/err") $OUT"
	expect_match "$OUT" '^verdict: would run' "explain's verdict"
	expect_match "$OUT" "user joined /proc/$PIDA/ns/user" "explain: the user namespace joined"
	expect_match "$OUT" "id mapping: the joined user namespace's" "explain: its mapping"
	"$OCI" --root "$ROOT" create --bundle "$B" "$idb" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create B: $(cat "$T_TMP/err")"
	pidb=$(jq -r .pid "$ROOT/$idb/state.json")
	# created, not started: B's init is not dumpable (it became A's root
	# from the host's uid 0; the helper that joined A's user namespace set
	# it so before), so A's root, who has CAP_SYS_PTRACE there, cannot
	# reach it before it executes B's process. (The kernel makes it so at
	# the uid change as well: this holds with the helper's prctl reverted;
	# the window it closes, before the uid change, is not caught here.)
	if command -v nsenter >/dev/null; then
		nsenter -t "$PIDA" -U cat "/proc/$pidb/environ" >/dev/null 2>&1 &&
			fail "A's root reads B's init's /proc/$pidb/environ before it runs B's process"
		nsenter -t "$PIDA" -U cat "/proc/$PIDA/environ" >/dev/null 2>&1 ||
			fail "A's root cannot read its own process's environ (the check above proves nothing)"
	fi
	oci start "$idb"
	expect_eq "$RC" 0 "start B: $ERR"
	wait_for "$B/rootfs/hn" || fail "B never ran"
	local ns
	for ns in user net uts; do
		expect_eq "$(readlink "/proc/$pidb/ns/$ns")" "$(readlink "/proc/$PIDA/ns/$ns")" "B's $ns namespace is A's"
	done
	expect_eq "$(cat "$B/rootfs/um")" "$(cat "/proc/$PIDA/uid_map")" "B's uid_map (inside) is A's"
	expect_eq "$(cat "$B/rootfs/hn")" pod-a "B's hostname is A's"
	oci exec "$idb" cat /proc/self/uid_map
	expect_eq "$RC:$OUT" "0:$(cat "/proc/$PIDA/uid_map")" "exec in B: A's user namespace: $ERR"
	[ -n "$(cat "/proc/$pidb/uid_map")" ] && ! awk '$2 == 0 {f = 1} END {exit !f}' "/proc/$pidb/uid_map" ||
		fail "B maps someone to the host's root: $(cat "/proc/$pidb/uid_map")"
	[ "$(stat -c %u "/proc/$pidb")" != 0 ] || fail "B's init runs as the host's root"
	[ -n "$(slot_of "$ROOT/$ida")" ] || fail "A has no host id range"
	[ -z "$(slot_of "$ROOT/$idb")" ] || fail "a host id range was taken for B: $(slot_of "$ROOT/$idb")"
	expect_eq "$(jq -r .slot "$ROOT/$idb/state.json")" -1 "B's state: no slot"
	oci delete --force "$idb"
	expect_eq "$RC" 0 "delete B: $ERR"
	oci delete --force "$ida"
	expect_eq "$RC" 0 "delete A: $ERR"
	gone "$PIDA" "$pidb" || fail "A or B still runs"
	nothing_left "$ida"
	nothing_left "$idb"
	[ -z "$(slot_of "$ROOT/$ida")" ] || fail "A's range not freed"
	t_assert
}

# B joins A's user and mount namespaces (and network): its root is A's tree
# as A made it, B's own root.path and mounts are not applied to it.
test_pod_joins_mount_namespace_owned_by_joined_user_ns() {
	setup_oci || return
	local ida=$ID-a idb=$ID-b pidb
	pod_a "$WS/a" "$ida" || return
	bundle "$B" sleep 1000
	join_a "$B" user mount network
	OUT=$("$CORDON" explain --bundle "$B" 2>"$T_TMP/err")
	expect_match "$OUT" '^verdict: would run' "explain's verdict: $(cat "$T_TMP/err")"
	expect_match "$OUT" "^paths: the joined mount namespace's tree, as it is" "explain: the tree is A's"
	"$OCI" --root "$ROOT" create --bundle "$B" "$idb" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create B: $(cat "$T_TMP/err")"
	oci start "$idb"
	expect_eq "$RC" 0 "start B: $ERR"
	pidb=$(jq -r .pid "$ROOT/$idb/state.json")
	expect_eq "$(readlink "/proc/$pidb/ns/mnt")" "$(readlink "/proc/$PIDA/ns/mnt")" "B's mount namespace is A's"
	expect_eq "$(cat "/proc/$pidb/root/a-only" 2>&1)" a "B's root is A's tree"
	[ -z "$(slot_of "$ROOT/$idb")" ] || fail "a host id range was taken for B"
	grep -q "$B" "/proc/$PIDA/mountinfo" && fail "B's bundle was mounted in A's tree"
	oci delete --force "$idb"
	expect_eq "$RC" 0 "delete B: $ERR"
	oci delete --force "$ida"
	expect_eq "$RC" 0 "delete A: $ERR"
	gone "$PIDA" "$pidb" || fail "A or B still runs"
	nothing_left "$ida"
	nothing_left "$idb"
	t_assert
}

# refused_join WHAT PATTERN: create refuses B's config with one line matching
# PATTERN, leaves nothing, and explain --bundle gives the same refusal.
refused_join() {
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID-b" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?:$(wc -l <"$T_TMP/err")" "1:1" "$1: refused in one line: $(cat "$T_TMP/err")"
	expect_match "$(cat "$T_TMP/err")" "$2" "$1: its error"
	[ ! -e "$ROOT/$ID-b" ] || fail "$1: state directory left behind"
	[ -z "$(slot_of "$ROOT/$ID-b")" ] || fail "$1: a host id range left behind"
	OUT=$("$CORDON" explain --bundle "$B" 2>&1)
	expect_eq "$?" 1 "$1: explain --bundle refuses it too"
	expect_match "$OUT" "^verdict: refused: .*$2" "$1: explain's verdict"
}

# Joining the host's user namespace, a mount namespace the host's user
# namespace owns (with or without a user namespace joined), a user
# namespace that maps the host's root or that another user made, or A's
# mount namespace without A's user namespace: each refused with one line,
# nothing left behind.
test_join_host_user_or_root_owned_mount_ns_refused() {
	setup_oci || return
	local ida=$ID-a
	pod_a "$WS/a" "$ida" || return
	bundle "$B" true
	# the test's own shell's (pid 1's may not be readable here: a
	# machine's init that is not dumpable); the host's all the same
	jq --arg p "/proc/$$/ns/user" '.linux.namespaces += [{type: "user", path: $p}]' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	refused_join "the host's user namespace" "user path /proc/$$/ns/user is the host's user namespace: the container would be host root"
	bundle "$B" true
	join_a "$B" user
	jq --arg p "/proc/$$/ns/mnt" '.linux.namespaces = [(.linux.namespaces[] | select(.type != "mount")), {type: "mount", path: $p}]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	refused_join "a root-owned mount namespace" "mount namespace /proc/$$/ns/mnt, which the host's user namespace owns"
	bundle "$B" true
	jq --arg p "/proc/$$/ns/mnt" '.linux.namespaces = [(.linux.namespaces[] | select(.type != "mount")), {type: "mount", path: $p}]' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	refused_join "a root-owned mount namespace, no user namespace joined" "mount namespace /proc/$$/ns/mnt, which the host's user namespace owns"
	bundle "$B" true
	join_a "$B" mount
	refused_join "A's mount namespace, A's user namespace not joined" "needs the user namespace that owns it joined"
	bundle "$B" true
	join_a "$B" user
	jq '.linux.uidMappings = [{containerID: 0, hostID: 300000, size: 65536}]' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	refused_join "mappings with a joined user namespace" "uidMappings with the user namespace /proc/$PIDA/ns/user joined by path"
	unshare -U -r sh -c "echo > $T_TMP/mapped; exec sleep 1000" &
	local up=$!
	wait_for "$T_TMP/mapped" || fail "unshare never ran"
	bundle "$B" true
	jq --arg p "/proc/$up/ns/user" '.linux.namespaces += [{type: "user", path: $p}]' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	refused_join "a user namespace mapping the host's root" "user path /proc/$up/ns/user maps uid 0 to the host's uid 0"
	kill "$up"
	wait "$up" 2>/dev/null
	# one made by another user (nobody, its 0 mapped to nobody): that user
	# would hold the container's root
	setpriv --reuid 65534 --regid 65534 --clear-groups unshare -U -r sh -c "exec sleep 1000" &
	up=$!
	for _ in $(seq 600); do [ "$(readlink "/proc/$up/exe")" = "$(readlink -f "$(command -v sleep)")" ] && break; sleep 0.05; done
	bundle "$B" true
	jq --arg p "/proc/$up/ns/user" '.linux.namespaces += [{type: "user", path: $p}]' "$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	refused_join "a user namespace another user made" "user path /proc/$up/ns/user was made by uid 65534, not by cordon-oci's"
	kill "$up"
	wait "$up" 2>/dev/null
	oci delete --force "$ida"
	nothing_left "$ida"
	t_assert
}

# Outside review of cordon-oci 2, F1: a process exec adds joins the
# container's cgroup as it is: in every hierarchy the container has, and
# its limits untouched (exec wrote a zeroed config's "limits": memory
# unlimited, and failed before joining, so the process ran outside).
test_exec_joins_the_cgroup_and_keeps_its_limits() {
	setup_oci || return
	bundle "$B" sleep 1000
	jq '.linux.resources = {memory: {limit: 268435456}, pids: {limit: 64}}' "$B/config.json" >"$B/c" &&
		mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" create --bundle "$B" "$ID" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create: $(cat "$T_TMP/err")"
	oci start "$ID"
	local cg limits
	cg=$(jq -r .cgroup "$ROOT/$ID/state.json")
	limits() {
		if [ -f "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes" ]; then
			echo "$(cat "/sys/fs/cgroup/memory$cg/memory.limit_in_bytes") $(cat "/sys/fs/cgroup/pids$cg/pids.max")"
		else
			echo "$(cat "/sys/fs/cgroup$cg/memory.max") $(cat "/sys/fs/cgroup$cg/pids.max")"
		fi
	}
	expect_eq "$(limits)" "268435456 64" "the limits before"
	oci exec "$ID" cat /proc/self/cgroup
	expect_eq "$RC" 0 "exec: $ERR"
	local line bad=
	while read -r line; do
		# v1: the memory and pids hierarchies (a hybrid host's 0:: is not
		# cordon-oci's there); v2: the unified one
		case "$line" in
		*:memory:*|*:pids:*) [[ "$line" == *"$(basename "$cg")" ]] || bad="$bad $line" ;;
		0::*) grep -q ':memory:' <<<"$OUT" || [[ "$line" == *"$(basename "$cg")" ]] || bad="$bad $line" ;;
		esac
	done <<<"$OUT"
	[ -z "$bad" ] || fail "the exec'd process outside the container's cgroup:$bad"
	expect_eq "$(limits)" "268435456 64" "the limits after the exec"
	oci delete --force "$ID"
	nothing_left "$ID"
	t_assert
}

# Outside review of cordon-oci 2, F2: a user namespace joined by path runs
# as its container's range of host ids, so that range stays taken while the
# joining container lives (B holds it shared, through A's delete: a new
# container gets another range), and a namespace whose range no live
# container holds (kept alive past its container's delete by a bind of its
# nsfs file) is refused: its ids may be someone else's by then.
test_joined_user_ns_keeps_its_range() {
	setup_oci || return
	local ida=$ID-a idb=$ID-b idc=$ID-c base slot
	pod_a "$WS/a" "$ida" || return
	base=$(uid_base "$PIDA")
	slot=$(slot_of "$ROOT/$ida") || { fail "no range names A"; return; }
	touch "$T_TMP/nsA"
	mount --bind "/proc/$PIDA/ns/user" "$T_TMP/nsA" || { fail "bind of A's user namespace"; return; }
	bundle "$B" sh -c 'exec sleep 1000'
	join_a "$B" user
	"$OCI" --root "$ROOT" create --bundle "$B" "$idb" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create B: $(cat "$T_TMP/err")"
	oci delete --force "$ida"
	expect_eq "$RC" 0 "delete A: $ERR"
	mkdir -p "$WS/c"
	bundle "$WS/c" sh -c 'exec sleep 1000'
	"$OCI" --root "$ROOT" create --bundle "$WS/c" "$idc" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "create C: $(cat "$T_TMP/err")"
	local pidc
	pidc=$(jq -r .pid "$ROOT/$idc/state.json")
	[ "$(uid_base "$pidc")" != "$base" ] || fail "C got A's ids ($base) while B runs as them"
	oci delete --force "$idb"
	oci delete --force "$idc"
	# now nothing holds A's range: a container joining A's namespace (still
	# alive through the bind) is refused, and nothing is left of it
	bundle "$B" sh -c 'exec sleep 1000'
	jq --arg p "$T_TMP/nsA" '.linux.namespaces = [(.linux.namespaces[] | select(.type != "user")), {type: "user", path: $p}] | del(.hostname)' \
		"$B/config.json" >"$B/c" && mv "$B/c" "$B/config.json"
	"$OCI" --root "$ROOT" create --bundle "$B" "$idb" </dev/null >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 1 "create B after A's range was freed"
	expect_match "$(cat "$T_TMP/err")" "which no live container holds" "its line"
	expect_eq "$(wc -l <"$T_TMP/err")" 1 "one line"
	[ ! -e "$ROOT/$idb" ] || fail "the refused create left $ROOT/$idb"
	umount "$T_TMP/nsA"
	t_assert
}

for t in $(declare -F | awk '{print $3}' | grep '^test_'); do t_run "$t"; done
