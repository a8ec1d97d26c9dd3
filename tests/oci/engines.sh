# cordon-oci under the engines that call OCI runtimes (issue 31): podman
# (through conmon) and containerd (through its runc shim v2, driven by ctr).
# The runtime is $OCI_RUNTIME, else $RUNTIME (default BUILD/cordon-oci);
# OCI_RUNTIME=/usr/bin/crun runs the same tests against crun (make test-oci
# runs both, tests/oci/run-files.sh). Every test skips, counted with its
# reason, where the runtime or the engine is missing.
# What the tests drive in the runtime: create/start/delete with podman's
# binds (/dev/shm, a tmpfs below a 0700 directory; /etc/hosts...), -v
# volumes, --tmpfs, --read-only, --user, a deny-all device rule, seccomp;
# the console socket (run -it, exec -it, ctr run -t); exec (--detach under
# conmon and the shim, --user); kill by number and name, pause/resume, ps;
# the memory cgroup's OOM kill.
#
# OCI_RUNTIME_WRAP: a command the engines run the runtime under (it gets the
# runtime and its arguments: "WRAP RUNTIME ARGS..."). Default: none, except
# for crun on a hybrid host (a cgroup2 mount at /sys/fs/cgroup/unified beside
# v1), which crun 1.8 refuses: there scripts/oci-hybrid-ns.sh (every runtime
# call in a private mount namespace with that mount hidden). "none" turns
# the default off. The engines get one executable, $OCI_DIR/runtime, that
# execs "WRAP RUNTIME ARGS..." (no fork: the pid file and the console
# socket are the runtime's own).
#
# Nothing here uses the host's engine state: podman gets private --root,
# --runroot and --tmpdir, vfs storage, the cgroupfs manager, file events and
# an image made by `podman import` of a busybox rootfs built here; containerd
# is a private daemon (socket, root, state under the test's directory),
# stopped by a trap. No network: --network none, --pull never.
. "$(dirname "$0")/../lib.sh"

RUNTIME=${OCI_RUNTIME:-${RUNTIME:-$BUILD/cordon-oci}}
IMAGE=localhost/cordon-oci-test:busybox
# podman's root defaults for nofile and nproc (1048576) exceed this kind of
# machine's hard limits, and no runtime may raise them without
# CAP_SYS_RESOURCE: every container gets the caller's hard limit instead.
ULIMITS=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
OCI_DIR=""

oci_skip_reason() { # prints why the file's tests cannot run here, or nothing
	[ "$(id -u)" = 0 ] || { echo "not root (the engines and OCI runtimes need root)"; return; }
	[ -x "$RUNTIME" ] || { echo "no OCI runtime at $RUNTIME (set RUNTIME=PATH; build/cordon-oci is built by make)"; return; }
	command -v busybox >/dev/null || echo "no busybox for the image (Debian: busybox-static)"
}
SKIP_WHY=$(oci_skip_reason)

wrap_default() {
	if [ -n "${OCI_RUNTIME_WRAP:-}" ]; then
		[ "$OCI_RUNTIME_WRAP" = none ] || echo "$OCI_RUNTIME_WRAP"
	elif [ "$(basename "$RUNTIME")" = crun ] &&
		awk '$5 == "/sys/fs/cgroup/unified" && $9 == "cgroup2" {f=1} END {exit !f}' /proc/self/mountinfo; then
		echo "$TOP/scripts/oci-hybrid-ns.sh"
	fi
}

# The file's own directory: the runtime's wrapper, the image's rootfs
# tarball, podman's storage (every test runs in a subshell of its own: what
# one test puts here, the next finds on disk). Made before the first test.
oci_dir() {
	OCI_DIR=$(mktemp -d /tmp/cordon-oci-eng.XXXXXX)
	chmod 755 "$OCI_DIR"
	local w
	w=$(wrap_default)
	printf '#!/bin/sh\nexec %s %q "$@"\n' "${w:+$(printf '%q' "$w")}" "$RUNTIME" >"$OCI_DIR/runtime"
	chmod 755 "$OCI_DIR/runtime"
	# The image: busybox with one link per applet, /etc/passwd and /etc/group.
	local r=$OCI_DIR/rootfs c
	mkdir -p "$r/bin" "$r/etc" "$r/dev" "$r/proc" "$r/sys" "$r/tmp" "$r/root"
	cp "$(command -v busybox)" "$r/bin/busybox"
	for c in $("$r/bin/busybox" --list); do [ "$c" = busybox ] || ln -s busybox "$r/bin/$c"; done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\n' >"$r/etc/group"
	tar --numeric-owner --owner=0 --group=0 -C "$r" -cf "$OCI_DIR/rootfs.tar" .
}
oci_cleanup() {
	[ -n "$OCI_DIR" ] || return 0
	if [ -d "$OCI_DIR/podman" ]; then
		pm rm --all --force --time 0 >/dev/null 2>&1
		pm rmi --all --force >/dev/null 2>&1
	fi
	awk -v w="$OCI_DIR/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf "$OCI_DIR"
}
trap 'rc=$?; oci_cleanup; (exit $rc); t_exit_status' EXIT
[ -n "$SKIP_WHY" ] || oci_dir

# pm ARGS...: podman on the file's private storage with $RUNTIME (a hang
# guard of 120 s, not a measurement).
pm() {
	timeout -k 5 120 podman --root "$OCI_DIR/podman/root" --runroot "$OCI_DIR/podman/runroot" \
		--tmpdir "$OCI_DIR/podman/tmp" --storage-driver vfs --cgroup-manager cgroupfs \
		--events-backend file --runtime "$OCI_DIR/runtime" "$@"
}
# podman_ready: skip reason or nothing; imports the image once.
podman_ready() {
	[ -z "$SKIP_WHY" ] || { echo "$SKIP_WHY"; return; }
	command -v podman >/dev/null || { echo "no podman (Debian: podman)"; return; }
	command -v conmon >/dev/null || [ -x /usr/libexec/podman/conmon ] || { echo "no conmon (Debian: conmon)"; return; }
	if [ ! -d "$OCI_DIR/podman" ]; then
		mkdir -p "$OCI_DIR/podman"
		pm import --change CMD=/bin/sh "$OCI_DIR/rootfs.tar" "$IMAGE" >"$OCI_DIR/import.log" 2>&1 ||
			{ echo "podman import failed: $(tail -1 "$OCI_DIR/import.log")" >&2; rm -rf "$OCI_DIR/podman"; return 1; }
	fi
}
# prun [podman run options...] -- CMD...: sets OUT (stdout), ERR, RC.
prun() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	OUT=$(pm run --network none --pull never "${ULIMITS[@]}" "${opts[@]}" "$IMAGE" "$@" 2>"$T_TMP/err")
	RC=$?
	ERR=$(cat "$T_TMP/err")
}
need_podman() { # `need_podman || return`: skip with the reason, or fail if the set-up failed
	local why
	why=$(podman_ready) || { fail "podman set-up: $why"; return 1; }
	[ -z "$why" ] || t_skip "$why"
}

test_podman_run_true() {
	need_podman || return
	prun --rm -- true
	expect_eq "$RC" 0 "podman run --rm IMAGE true (stderr: $ERR)"
	expect_eq "$(pm ps -a -q | wc -l)" 0 "--rm leaves no container"
	t_assert
}

test_podman_run_output_and_status() {
	need_podman || return
	prun --rm -- echo hello from the container
	expect_eq "$RC $OUT" "0 hello from the container" "echo's output (stderr: $ERR)"
	prun --rm -- sh -c 'echo to-stderr >&2; exit 7'
	expect_eq "$RC" 7 "the exit status is passed through (stderr: $ERR)"
	expect_match "$ERR" 'to-stderr' "the container's stderr"
	t_assert
}

test_podman_default_seccomp() {
	need_podman || return
	# podman's default profile (containers-common's seccomp.json) applies
	# unless --security-opt seccomp=unconfined: filter mode inside.
	prun --rm -- grep '^Seccomp:' /proc/self/status
	expect_match "$OUT" '^Seccomp:[[:space:]]+2$' "podman's default seccomp profile is in force (rc $RC, stderr: $ERR)"
	t_assert
}

test_podman_run_tty() {
	need_podman || return
	# podman run -it: the runtime makes the container's pty and hands its
	# master to conmon over --console-socket; driven here on a pty of ours.
	local j out
	j=$(python3 "$TOP/tests/ptydrive.py" 30 100 \
		'[["expect", "ready"], ["send", "echo typed-$((6*7))\n"], ["expect", "typed-42"], ["send", "exit 3\n"]]' -- \
		timeout -k 5 120 podman --root "$OCI_DIR/podman/root" --runroot "$OCI_DIR/podman/runroot" \
		--tmpdir "$OCI_DIR/podman/tmp" --storage-driver vfs --cgroup-manager cgroupfs \
		--events-backend file --runtime "$OCI_DIR/runtime" \
		run -it --rm --network none --pull never "${ULIMITS[@]}" "$IMAGE" \
		sh -c 'tty; stty size; test -t 0 && test -t 1 && echo ready; exec sh')
	out=$(jq -r .out <<<"$j" | tr -d '\r')
	[ "$(jq -r .failed <<<"$j")" = null ] || fail "driver: $(jq -r .failed <<<"$j"); terminal showed: $(head -c 300 <<<"$out"); stderr: $(jq -r .stderr <<<"$j")"
	expect_match "$out" '^/dev/pts/[0-9]+$' "the container's stdin is a pty of its own"
	expect_match "$out" '^30 100$' "the window size is the caller's terminal's"
	expect_match "$out" '^typed-42$' "typed input reaches the shell, its output comes back"
	expect_eq "$(jq -r .exit <<<"$j")" 3 "podman run -it's exit status is the shell's"
	t_assert
}

test_podman_exec() {
	need_podman || return
	local id
	prun -d -- sleep 600
	id=$OUT
	expect_eq "$RC" 0 "podman run -d (stderr: $ERR)"
	OUT=$(pm exec "$id" sh -c 'echo exec-ok; cat /proc/1/cmdline | tr "\0" " "' 2>&1)
	expect_eq "$?" 0 "podman exec (output: $OUT)"
	expect_match "$OUT" '^exec-ok$' "exec's output"
	expect_match "$OUT" '^sleep 600 ?$' "exec runs beside the container's init, in its pid namespace"
	pm exec "$id" sh -c 'exit 5' >/dev/null 2>&1
	expect_eq "$?" 5 "exec's exit status is passed through"
	OUT=$(pm exec -u 65534 "$id" id -u 2>&1)
	expect_eq "$OUT" 65534 "exec --user"
	pm rm -f -t 0 "$id" >/dev/null 2>&1
	t_assert
}

test_podman_stop() {
	need_podman || return
	local id
	# A trap for TERM: podman stop sends it (through the runtime's kill),
	# the container's init ends with status 5.
	prun -d -- sh -c 'trap "exit 5" TERM; echo up; while :; do sleep 0.1; done'
	id=$OUT
	expect_eq "$RC" 0 "podman run -d (stderr: $ERR)"
	pm stop -t 60 "$id" >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "podman stop ($(cat "$T_TMP/err"))"
	expect_eq "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$id" 2>&1)" "exited 5" "stopped by TERM"
	# Without a handler, stop -t 1 falls back to KILL.
	prun -d -- sleep 600
	id=$OUT
	pm stop -t 1 "$id" >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 0 "podman stop, KILL after the grace time ($(cat "$T_TMP/err"))"
	expect_eq "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$id" 2>&1)" "exited 137" "killed"
	pm rm -a -f -t 0 >/dev/null 2>&1
	t_assert
}

test_podman_logs() {
	need_podman || return
	local id
	prun -d --log-driver k8s-file -- sh -c 'echo log-out-line; echo log-err-line >&2'
	id=$OUT
	expect_eq "$RC" 0 "podman run -d (stderr: $ERR)"
	expect_eq "$(pm wait "$id" 2>&1)" 0 "podman wait"
	OUT=$(pm logs "$id" 2>&1)
	expect_match "$OUT" '^log-out-line$' "podman logs has stdout"
	expect_match "$OUT" '^log-err-line$' "podman logs has stderr"
	pm rm -f "$id" >/dev/null 2>&1
	t_assert
}

test_podman_memory_oom() {
	need_podman || return
	local id dir
	# 256 MiB in one buffer (busybox dd fills it) under --memory 64m (podman
	# sets memory+swap to twice that): the kernel's OOM killer ends it, in
	# the memory cgroup podman named (conmon watches that cgroup's OOM
	# events: memory.oom_control on v1, memory.events on v2).
	prun --rm --memory 64m -- dd if=/dev/zero of=/dev/null bs=256M count=1
	expect_eq "$RC" 137 "podman run --memory 64m exits 137 (stderr: $ERR)"
	# OOMKilled: conmon 2.1.6 (Debian 12) writes its "oom" flag file into
	# its working directory, podman's, while podman 4.3 looks for it in
	# the container's bundle (StaticDir): podman starts the container from
	# there (conmon is started at start, not at create).
	id=$(pm create --network none --pull never "${ULIMITS[@]}" --memory 64m "$IMAGE" \
		dd if=/dev/zero of=/dev/null bs=256M count=1 2>"$T_TMP/err")
	expect_eq "$?" 0 "podman create --memory 64m ($(cat "$T_TMP/err"))"
	dir=$(pm inspect -f '{{.StaticDir}}' "$id" 2>&1)
	(cd "$dir" && pm start -a "$id") >/dev/null 2>"$T_TMP/err"
	expect_eq "$?" 137 "podman start -a: 137 ($(cat "$T_TMP/err"))"
	expect_eq "$(pm inspect -f '{{.State.ExitCode}} {{.State.OOMKilled}}' "$id" 2>&1)" "137 true" "exit 137 and OOMKilled"
	pm rm -f "$id" >/dev/null 2>&1
	t_assert
}

test_podman_volumes_and_mounts() {
	need_podman || return
	# -v of a host directory (read-write) and of a file (read-only), below a
	# 0700 directory; --tmpfs; --read-only root: the runtime's binds and
	# its remounts. The directory's files are the host's root's.
	mkdir -m 700 "$WS/private"
	mkdir "$WS/private/vol"
	echo from-host >"$WS/private/vol/f"
	echo a-file >"$WS/private/file"
	prun --rm --read-only -v "$WS/private/vol:/vol" -v "$WS/private/file:/etc/file:ro" --tmpfs /scratch:size=1m -- \
		sh -c 'cat /vol/f /etc/file; echo written >/vol/new && echo vol-rw; echo x >/etc/file 2>/dev/null || echo file-ro;
		       echo x >/scratch/x && echo tmpfs-rw; touch /root-file 2>/dev/null || echo root-ro'
	expect_eq "$RC" 0 "podman run -v (stderr: $ERR)"
	expect_eq "$OUT" $'from-host\na-file\nvol-rw\nfile-ro\ntmpfs-rw\nroot-ro' "the volumes, the tmpfs and the read-only root"
	expect_eq "$(cat "$WS/private/vol/new" 2>&1)" written "the container's write reached the host directory"
	t_assert
}

test_podman_user() {
	need_podman || return
	# a process.user other than root, with podman's default capabilities
	prun --rm --user 1000:1000 -- sh -c 'id -u; id -g; grep ^CapBnd: /proc/self/status; grep ^CapEff: /proc/self/status'
	expect_eq "$RC" 0 "podman run --user 1000:1000 (stderr: $ERR)"
	expect_match "$OUT" $'^1000\n1000\n' "uid and gid"
	expect_match "$OUT" 'CapBnd:[[:space:]]+00000000800405fb' "podman's default bounding set"
	expect_match "$OUT" 'CapEff:[[:space:]]+0000000000000000' "no effective capability for a uid other than 0"
	t_assert
}

test_podman_pause_kill_signal() {
	need_podman || return
	local id
	prun -d -- sh -c 'trap "echo got-usr1" USR1; while :; do sleep 0.1; done'
	id=$OUT
	expect_eq "$RC" 0 "podman run -d (stderr: $ERR)"
	pm pause "$id" >/dev/null 2>"$T_TMP/err" || fail "podman pause: $(cat "$T_TMP/err")"
	expect_eq "$(pm inspect -f '{{.State.Status}}' "$id" 2>&1)" paused "after pause"
	pm unpause "$id" >/dev/null 2>"$T_TMP/err" || fail "podman unpause: $(cat "$T_TMP/err")"
	expect_eq "$(pm inspect -f '{{.State.Status}}' "$id" 2>&1)" running "after unpause"
	pm kill -s USR1 "$id" >/dev/null 2>"$T_TMP/err" || fail "podman kill -s USR1: $(cat "$T_TMP/err")"
	local i
	for i in $(seq 100); do pm logs "$id" 2>/dev/null | grep -q got-usr1 && break; sleep 0.1; done
	expect_match "$(pm logs "$id" 2>&1)" '^got-usr1$' "the signal reached the container's init"
	pm restart -t 1 "$id" >/dev/null 2>"$T_TMP/err" || fail "podman restart: $(cat "$T_TMP/err")"
	expect_eq "$(pm inspect -f '{{.State.Status}} {{.RestartCount}}' "$id" 2>&1)" "running 0" "after restart"
	pm rm -f -t 0 "$id" >/dev/null 2>&1
	t_assert
}

test_podman_exec_tty() {
	need_podman || return
	local id j out
	prun -d -- sleep 600
	id=$OUT
	j=$(python3 "$TOP/tests/ptydrive.py" 30 100 \
		'[["expect", "ready"], ["send", "echo typed-$((6*7))\n"], ["expect", "typed-42"], ["send", "exit 4\n"]]' -- \
		timeout -k 5 120 podman --root "$OCI_DIR/podman/root" --runroot "$OCI_DIR/podman/runroot" \
		--tmpdir "$OCI_DIR/podman/tmp" --storage-driver vfs --cgroup-manager cgroupfs \
		--events-backend file --runtime "$OCI_DIR/runtime" \
		exec -it "$id" sh -c 'tty; test -t 0 && test -t 1 && echo ready; exec sh')
	out=$(jq -r .out <<<"$j" | tr -d '\r')
	[ "$(jq -r .failed <<<"$j")" = null ] || fail "driver: $(jq -r .failed <<<"$j"); terminal showed: $(head -c 300 <<<"$out"); stderr: $(jq -r .stderr <<<"$j")"
	expect_match "$out" '^/dev/pts/[0-9]+$' "exec -it's stdin is a pty"
	expect_match "$out" '^typed-42$' "typed input reaches the shell"
	expect_eq "$(jq -r .exit <<<"$j")" 4 "podman exec -it's exit status"
	pm rm -f -t 0 "$id" >/dev/null 2>&1
	t_assert
}

# A private containerd (tests/oci/ctrd.sh): its socket, root and state
# under the test's T_TMP/ctrd, no CRI plugin; stopped when the test ends.
. "$TOP/tests/oci/ctrd.sh"
ctrr() { timeout -k 5 120 ctr -a "$T_TMP/ctrd/sock" -n cordon-test "$@"; }

# need_ctr: skips with the reason, or starts the private containerd (stopped
# when the test's subshell exits): `need_ctr || return`.
need_ctr() {
	[ -z "$SKIP_WHY" ] || { t_skip "$SKIP_WHY"; return; }
	local why
	why=$(ctrd_skip_reason)
	[ -z "$why" ] || { t_skip "$why"; return; }
	trap 'ctrd_stop' EXIT # the test's own subshell (t_run)
	ctrd_start || return 1
}
# ctr_status TASK: its status in `ctr task ls` once it is WANT (a hang guard of 30 s)
ctr_status() {
	local st=""
	for _ in $(seq 300); do
		st=$(ctrr task ls 2>/dev/null | awk -v t="$1" '$1 == t {print $3}')
		[ "$st" = "$2" ] && break
		sleep 0.1
	done
	echo "$st"
}

test_ctr_run_runc_shim() {
	need_ctr || return
	# ctr run --rootfs: a local rootfs directory, no image or snapshotter.
	OUT=$(ctrr run --rm --runtime io.containerd.runc.v2 --runc-binary "$OCI_DIR/runtime" \
		--rootfs "$OCI_DIR/rootfs" t1 /bin/sh -c 'echo from-ctr' 2>"$T_TMP/err")
	RC=$?
	expect_eq "$RC" 0 "ctr run through the runc shim v2 ($(cat "$T_TMP/err"); containerd: $(tail -3 "$T_TMP/ctrd/log"))"
	expect_match "$OUT" '^from-ctr$' "the container's output"
	OUT=$(ctrr run --rm --runtime io.containerd.runc.v2 --runc-binary "$OCI_DIR/runtime" \
		--rootfs "$OCI_DIR/rootfs" t2 /bin/sh -c 'exit 9' 2>"$T_TMP/err")
	expect_eq "$?" 9 "the task's exit status is passed through ($(cat "$T_TMP/err"))"
	# A task killed from outside (ctr task kill: the shim's runtime kill).
	ctrr run -d --runtime io.containerd.runc.v2 --runc-binary "$OCI_DIR/runtime" \
		--rootfs "$OCI_DIR/rootfs" t3 /bin/sleep 600 >/dev/null 2>"$T_TMP/err" || fail "ctr run -d: $(cat "$T_TMP/err")"
	ctrr task kill -s SIGKILL t3 2>&1 || fail "ctr task kill"
	expect_eq "$(ctr_status t3 STOPPED)" STOPPED "the killed task is stopped"
	ctrr task delete t3 >/dev/null 2>&1 || fail "ctr task delete"
	ctrr container delete t3 >/dev/null 2>&1 || fail "ctr container delete"
	expect_eq "$(ctrr task ls -q 2>/dev/null | wc -l) $(ctrr container ls -q 2>/dev/null | wc -l)" "0 0" "nothing left"
	t_assert
}

# The shim's other runtime calls: exec (a process beside the task's, its
# status), pause and resume (the freezer), ps (the cgroup's pids), and a
# task with a terminal (ctr run -t: the shim's console socket).
test_ctr_exec_pause_ps_tty() {
	need_ctr || return
	local rt=(--runtime io.containerd.runc.v2 --runc-binary "$OCI_DIR/runtime" --rootfs "$OCI_DIR/rootfs")
	ctrr run -d "${rt[@]}" t4 /bin/sleep 600 >/dev/null 2>"$T_TMP/err" || fail "ctr run -d: $(cat "$T_TMP/err")"
	OUT=$(ctrr task exec --exec-id e1 t4 /bin/sh -c 'echo from-exec; exit 6' 2>"$T_TMP/err")
	expect_eq "$? $OUT" "6 from-exec" "ctr task exec: output and status ($(cat "$T_TMP/err"))"
	ctrr task pause t4 2>"$T_TMP/err" || fail "ctr task pause: $(cat "$T_TMP/err")"
	expect_eq "$(ctr_status t4 PAUSED)" PAUSED "after pause"
	ctrr task resume t4 2>"$T_TMP/err" || fail "ctr task resume: $(cat "$T_TMP/err")"
	expect_eq "$(ctr_status t4 RUNNING)" RUNNING "after resume"
	local pid
	pid=$(ctrr task ls 2>/dev/null | awk '$1 == "t4" {print $2}')
	OUT=$(ctrr task ps t4 2>&1)
	expect_match "$OUT" "^$pid( |$)" "ctr task ps lists the task's pid $pid"
	ctrr task kill -s SIGKILL t4 2>&1 || fail "ctr task kill"
	expect_eq "$(ctr_status t4 STOPPED)" STOPPED "the killed task is stopped"
	ctrr task delete t4 >/dev/null 2>&1 || fail "ctr task delete"
	ctrr container delete t4 >/dev/null 2>&1 || fail "ctr container delete"
	local j out
	j=$(python3 "$TOP/tests/ptydrive.py" 30 100 '[["expect", "ready"], ["send", "exit 2\n"]]' -- \
		timeout -k 5 120 ctr -a "$T_TMP/ctrd/sock" -n cordon-test run --rm -t "${rt[@]}" t5 \
		/bin/sh -c 'tty; test -t 0 && echo ready; exec sh')
	out=$(jq -r .out <<<"$j" | tr -d '\r')
	[ "$(jq -r .failed <<<"$j")" = null ] || fail "driver: $(jq -r .failed <<<"$j"); terminal showed: $(head -c 300 <<<"$out"); stderr: $(jq -r .stderr <<<"$j")"
	expect_match "$out" '^/dev/pts/[0-9]+$' "ctr run -t: the task's stdin is a pty"
	expect_eq "$(jq -r .exit <<<"$j")" 2 "ctr run -t: the shell's status"
	expect_eq "$(ctrr task ls -q 2>/dev/null | wc -l) $(ctrr container ls -q 2>/dev/null | wc -l)" "0 0" "nothing left"
	t_assert
}

t_run test_podman_run_true
t_run test_podman_run_output_and_status
t_run test_podman_default_seccomp
t_run test_podman_run_tty
t_run test_podman_exec
t_run test_podman_stop
t_run test_podman_logs
t_run test_podman_memory_oom
t_run test_podman_volumes_and_mounts
t_run test_podman_user
t_run test_podman_pause_kill_signal
t_run test_podman_exec_tty
t_run test_ctr_run_runc_shim
t_run test_ctr_exec_pause_ps_tty
