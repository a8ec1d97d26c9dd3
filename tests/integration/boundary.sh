# The default boundary: identity, view of the filesystem, processes, env.
. "$(dirname "$0")/../lib.sh"

test_identity() {
	cordon_run -- "$WHOAMI"
	expect_eq "$RC" 0 "exit"
	expect_match "$OUT" "^uid 1000$" "uid"
	expect_match "$OUT" "euid 1000" "euid"
	expect_match "$OUT" "CapEff 0000000000000000" "no effective caps"
	expect_match "$OUT" "CapPrm 0000000000000000" "no permitted caps"
	expect_match "$OUT" "CapBnd 0000000000000000" "empty bounding set"
	expect_match "$OUT" "CapAmb 0000000000000000" "no ambient caps"
	expect_match "$OUT" "no_new_privs 1" "no_new_privs"
	expect_match "$OUT" "hostname cordon" "own UTS namespace"
	expect_match "$OUT" "pid [23]" "own PID namespace"
	expect_nomatch "$OUT" "Groups:.*\b0\b" "no host supplementary groups"
	expect_eq "$(field .status)" ok "status"
	expect_eq "$(field .enforcement.user_ns)" true "user_ns in report"
	check_report_shape
	t_assert
}

test_host_uid_is_never_root() {
	# The command lives until the test has looked at it (then killed), so
	# no load makes it end before it is seen.
	cordon_run -- "$HOSTILE" sleep 300 &
	local pid=$!
	local cmd="" uid i
	# Waits for the command to appear (set-up takes longer under load or
	# sanitizers), not for a fixed time: a hang guard of 5 minutes.
	for i in $(seq 6000); do
		cmd=$(pgrep -f "^$HOSTILE sleep 300$" | while read -r p; do
			[ "$(readlink /proc/$p/exe 2>/dev/null)" = "$HOSTILE" ] && echo "$p"; done | head -1)
		[ -n "$cmd" ] && break
		sleep 0.05
	done
	[ -n "$cmd" ] || fail "command process not found"
	uid=$(awk '/^Uid:/{print $2}' /proc/$cmd/status)
	[ "$uid" != 0 ] || fail "the command runs as host uid 0"
	[ -z "$cmd" ] || kill -KILL "$cmd"
	wait $pid
	t_assert
}

test_host_processes_invisible() {
	sleep 30 &
	local host_pid=$!
	cordon_run -- /bin/sh -c "ls /proc | grep -c '^[0-9]'; $HOSTILE kill $host_pid; $HOSTILE ptrace $host_pid"
	kill $host_pid
	expect_match "$OUT" "^[1-5]$" "few processes visible"
	expect_match "$OUT" "denied ESRCH kill" "cannot signal a host process"
	expect_match "$OUT" "denied ESRCH ptrace" "cannot ptrace a host process"
	t_assert
}

test_files_outside_view_invisible() {
	echo secret >/tmp/cordon-host-secret.$$
	cordon_run -- /bin/sh -c "ls /root /home /var /opt /srv /boot /sys/kernel /sys/class /sys/devices/virtual /tmp/cordon-host-secret.$$ 2>&1; echo sys: \$(ls /sys) \$(ls /sys/fs); $HOSTILE read /etc/shadow"
	rm -f /tmp/cordon-host-secret.$$
	expect_match "$OUT" "/root.*No such file" "/root hidden"
	expect_match "$OUT" "/home.*No such file" "/home hidden"
	expect_match "$OUT" "/var.*No such file" "/var hidden"
	expect_match "$OUT" "/sys/kernel.*No such file" "/sys/kernel hidden"
	expect_match "$OUT" "/sys/class.*No such file" "/sys/class hidden"
	expect_match "$OUT" "/sys/devices/virtual.*No such file" "/sys/devices hidden"
	expect_match "$OUT" "sys: devices fs cgroup" "of /sys, only the CPU counts and the run's own cgroup"
	expect_match "$OUT" "cordon-host-secret.*No such file" "host /tmp hidden"
	expect_match "$OUT" "denied EACCES /etc/shadow" "/etc/shadow unreadable"
	t_assert
}

test_readonly_binds_refuse_writes() {
	mkdir data && echo x >data/f
	cordon_run --ro ./data -- /bin/sh -c "$HOSTILE write /usr/evil; $HOSTILE write /etc/evil; $HOSTILE write $WS/data/f; $HOSTILE write /evil; touch $WS/data/new 2>&1; chmod 777 $WS/data 2>&1"
	expect_match "$OUT" "denied EROFS /usr/evil" "/usr read-only"
	expect_match "$OUT" "denied EROFS /etc/evil" "/etc read-only"
	expect_match "$OUT" "denied EROFS $WS/data/f" "--ro bind read-only"
	expect_match "$OUT" "denied EROFS /evil" "root read-only"
	expect_match "$OUT" "Read-only file system" "no new files in --ro"
	expect_eq "$(cat data/f)" x "file unchanged"
	[ ! -e data/new ] || fail "file created in a read-only bind"
	t_assert
}

test_readonly_is_recursive() {
	# A submount below a --ro path must be read-only too.
	mkdir -p outer/inner
	mount -t tmpfs none outer/inner || { echo "cannot mount"; return 1; }
	cordon_run --ro ./outer -- "$HOSTILE" write "$WS/outer/inner/x"
	umount outer/inner
	expect_match "$OUT" "denied EROFS" "submount read-only"
	t_assert
}

test_dev_is_minimal_and_readonly() {
	cordon_run -- /bin/sh -c "ls /dev | tr '\n' ' '; $HOSTILE write /dev/evil; echo x > /dev/null && echo null-ok; echo y > /dev/shm/s && echo shm-ok; ls -l /dev/sda 2>&1"
	expect_match "$OUT" "^fd full null ptmx pts random shm stderr stdin stdout tty urandom zero" "device list"
	expect_match "$OUT" "denied EROFS /dev/evil" "/dev read-only"
	expect_match "$OUT" "null-ok" "/dev/null writable"
	expect_match "$OUT" "shm-ok" "/dev/shm writable"
	expect_match "$OUT" "No such file" "no host devices"
	t_assert
}

test_command_has_no_capability_over_the_run() {
	# The command is in a nested user namespace: even its own hostname,
	# loopback and mounts are out of reach.
	cordon_run -- /bin/sh -c "hostname evil 2>&1; $HOSTILE mount; cat /proc/self/uid_map"
	expect_match "$OUT" "Operation not permitted|must be root" "sethostname refused"
	expect_match "$OUT" "denied EPERM mount" "mount refused"
	expect_match "$OUT" "^ +1000 +[0-9]+ +1$" "nested map of uid 1000"
	t_assert
}

test_workspace_writable_owned_by_invoker() {
	cordon_run -- /bin/sh -c 'echo hi > made.txt; mkdir d; echo x > d/y'
	expect_eq "$RC" 0 "exit"
	expect_eq "$(cat made.txt)" hi "content"
	expect_eq "$(stat -c %u made.txt)" "$(id -u)" "owner is the invoking user"
	expect_eq "$(stat -c %u d/y)" "$(id -u)" "owner of nested file"
	t_assert
}

test_workspace_without_idmapped_mounts() {
	# A workspace on a filesystem without idmapped mounts (ramfs here; tmpfs
	# before Linux 6.3, some FUSE and network filesystems): as root, a plain
	# bind, the invoking user's files handed to the run's uid (never host
	# uid 0) for the run and back after it, new files included.
	[ "$(id -u)" = 0 ] || { t_skip "needs root (to mount a ramfs)"; return; }
	mkdir r && mount -t ramfs -o mode=755 ramfs r || { t_skip "cannot mount a ramfs"; return; }
	cd r || return 1
	echo old >existing.txt
	echo same >keep.txt
	mkdir sub && echo deep >sub/deep.txt
	ln -s /etc/hostname link
	cordon_run -- /bin/sh -c 'id -u; stat -c %u . existing.txt sub/deep.txt; echo more >>existing.txt; echo hi >made.txt
		mkdir -p d/e && echo x >d/e/y; echo z >>sub/deep.txt; touch s && chmod 4755 s; ln -s made.txt l2'
	local sb
	sb=$(field .enforcement.sandbox_host_uid)
	if [ "$(field .enforcement.workspace_ownership)" = idmapped ]; then
		cd .. && umount r
		t_skip "ramfs has idmapped mounts on this kernel"
		return
	fi
	expect_eq "$RC:$(field .status)" "0:ok" "run: $ERR"
	expect_eq "$OUT" $'1000\n1000\n1000\n1000' "the run owns its workspace"
	expect_eq "$(field .enforcement.workspace_ownership):$(field .enforcement.idmapped_workspace)" "chown:false" "method"
	expect_match "$(field .enforcement.workspace_ownership_reason)" "no idmapped mounts.*uid $sb for the run and back" "reason"
	expect_eq "$(cat existing.txt made.txt d/e/y sub/deep.txt | tr '\n' ' ')" "old more hi x deep z " "contents"
	expect_eq "$(stat -c %u:%g . existing.txt keep.txt made.txt d d/e d/e/y sub sub/deep.txt s l2 link | sort -u)" "$(id -u):$(id -g)" "everything is the invoking user's again"
	expect_eq "$(find . -uid "$sb" -o -gid "$sb" | wc -l)" 0 "nothing left with the run's uid"
	expect_eq "$(stat -c %a s)" 644 "the set-user-ID chmod was refused"
	expect_eq "$(stat -c %u /etc/hostname)" 0 "a symlink is not followed"
	expect_eq "$(field '[.outputs[].path] | join(",")')" "d/e/y,existing.txt,l2,made.txt,s,sub/deep.txt" "only what the run changed is an output"
	# The default (overlay) found out only with init's user namespace: it
	# fell back to direct, said why, and left no change set behind. (A
	# kernel without overlayfs loaded, as in the test VM, falls back before.)
	local why="(the filesystem of .*/r has no idmapped mounts|this kernel has no overlayfs)"
	expect_eq "$(field .enforcement.workspace_mode)" direct "the default fell back"
	expect_match "$(field .enforcement.workspace_mode_reason)" "^overlay \\(the default\\), direct instead: $why" "fallback reason"
	expect_eq "$(ls -A .. | grep -c cordon-changes)" 0 "no change set left"
	# Asked for, overlay holds unless allow_weaker has "workspace".
	cordon_run --workspace-mode overlay -- /bin/sh -c 'echo x >asked'
	expect_eq "$RC:$(field .status)" "125:setup-error" "overlay asked, no fallback"
	expect_match "$ERR" "workspace mode overlay: $why.*allow_weaker" "says why"
	[ ! -e asked ] || fail "the refused run ran"
	echo '{"filesystem": {"workspace_mode": "overlay"}, "enforcement": {"allow_weaker": ["workspace"]}}' >../p.json
	cordon_run --policy ../p.json -- /bin/sh -c 'echo x >asked'
	expect_eq "$RC:$(field .enforcement.workspace_mode):$(cat asked)" "0:direct:x" "allow_weaker: direct"
	expect_match "$(field .enforcement.workspace_mode_reason)" "^overlay asked, direct instead: $why" "reason when asked"
	expect_eq "$(stat -c %u asked)" "$(id -u)" "the fallback's files are the invoker's"
	cd .. && umount r
	t_assert
}

test_tmpfs_and_private_tmp() {
	cordon_run --tmpfs /scratch:1M -- /bin/sh -c 'echo a > /scratch/f && cat /scratch/f && df -k /scratch | tail -1; echo b > /tmp/t && cat /tmp/t; head -c 2000000 /dev/zero > /scratch/big 2>&1; echo rc=$?'
	expect_match "$OUT" "^a$" "tmpfs writable"
	expect_match "$OUT" " 1024 " "tmpfs size applied"
	expect_match "$OUT" "^b$" "/tmp writable"
	expect_match "$OUT" "rc=1" "tmpfs size enforced"
	[ ! -e /scratch ] || fail "/scratch appeared on the host"
	t_assert
}

test_environment_is_clean() {
	FOO=leak cordon_run --env A=1 --env B=two=2 -- /usr/bin/env
	expect_nomatch "$OUT" "FOO" "host variable passed through"
	expect_match "$OUT" "^PATH=" "PATH"
	expect_match "$OUT" "^HOME=" "HOME"
	expect_match "$OUT" "^LANG=" "LANG"
	expect_match "$OUT" "^TERM=" "TERM"
	expect_match "$OUT" "^A=1$" "--env"
	expect_match "$OUT" "^B=two=2$" "--env with ="
	expect_eq "$(printf '%s\n' "$OUT" | wc -l)" 6 "nothing else"
	t_assert
}

test_only_std_fds() {
	exec 7>/tmp/cordon-fd-test.$$
	cordon_run -- "$HOSTILE" fds
	exec 7>&-
	rm -f /tmp/cordon-fd-test.$$
	expect_eq "$(printf '%s\n' "$OUT" | tr '\n' ' ')" "fd 0 fd 1 fd 2 " "open descriptors"
	t_assert
}

test_stdin_passed() {
	OUT=$(printf 'line1\nline2\n' | "$CORDON" run -- /bin/cat)
	expect_eq "$OUT" $'line1\nline2' "stdin reaches the command"
	t_assert
}

test_output_streams_as_it_arrives() {
	# The first line must arrive while the command is still running: the
	# command then waits for the reader's answer (a file in the workspace),
	# which only a streamed line can bring. Buffered until exit, the command
	# gives up after its own 30 s and says so. Events, not seconds.
	# Direct mode: the answer is a file the host makes in the workspace
	# while the run is alive, which an overlay's run need not see.
	local got
	got=$("$CORDON" run --workspace-mode direct -- /bin/sh -c 'echo first; i=0
		while [ ! -e go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
		if [ -e go ]; then echo released; else echo not-streamed; fi' |
		{ read -r l; echo "$l"; touch go; cat; })
	expect_eq "$got" $'first\nreleased' "streamed before exit"
	t_assert
}

test_stdout_stderr_counted_and_hashed() {
	cordon_run -- /bin/sh -c 'printf hello; printf oops >&2'
	expect_eq "$OUT" hello "stdout forwarded"
	expect_eq "$ERR" oops "stderr forwarded"
	expect_eq "$(field .stdout.bytes)" 5 "stdout bytes"
	expect_eq "$(field .stderr.bytes)" 4 "stderr bytes"
	expect_eq "$(field .stdout.sha256)" "$(printf hello | sha256sum | cut -d' ' -f1)" "stdout sha256"
	expect_eq "$(field .stderr.sha256)" "$(printf oops | sha256sum | cut -d' ' -f1)" "stderr sha256"
	t_assert
}

test_no_controlling_terminal() {
	cordon_run -- /bin/sh -c 'cat /dev/tty 2>&1; ps -o tty= -p $$'
	expect_match "$OUT" "No such device or address" "/dev/tty not openable"
	expect_match "$OUT" "^\?" "no tty"
	t_assert
}

test_host_sees_no_mounts() {
	local before after
	before=$(mount_count)
	cordon_run --tmpfs /x -- /bin/sh -c "sleep 0.3"
	after=$(mount_count)
	expect_eq "$after" "$before" "host mount table unchanged"
	t_assert
}

test_symlink_planted_in_workspace_refused() {
	ln -s /etc planted
	cordon_run --rw ./planted -- /bin/true
	expect_eq "$RC" 125 "setup-error exit"
	expect_eq "$(field .status)" setup-error "status"
	expect_match "$(field .reason)" "symbolic link inside the writable path" "reason"
	t_assert
}

test_outputs_listed() {
	echo old >keep.txt
	echo old >change.txt
	echo old >gone.txt
	cordon_run -- /bin/sh -c 'echo new > change.txt; rm gone.txt; mkdir -p out; echo r > out/result.txt'
	expect_eq "$(field '[.outputs[].path] | join(",")')" "change.txt,gone.txt,out/result.txt" "changed files only"
	expect_eq "$(field '.outputs[] | select(.path=="gone.txt") | .change')" deleted "deletion"
	expect_eq "$(field '.outputs[] | select(.path=="out/result.txt") | .sha256')" "$(sha256sum out/result.txt | cut -d' ' -f1)" "sha256"
	expect_eq "$(field '.outputs[] | select(.path=="out/result.txt") | .bytes')" 2 "bytes"
	t_assert
}

test_cwd_option() {
	mkdir sub
	cordon_run --cwd ./sub -- /bin/pwd
	expect_eq "$OUT" "$WS/sub" "working directory"
	t_assert
}

test_unprivileged_user() {
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null; then
		t_skip "unprivileged user namespaces are disabled on this host"; return
	fi
	chmod 777 "$WS"
	local out
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --ro "$BUILD" -- /bin/sh -c "$WHOAMI; touch made; $HOSTILE write /usr/x; ls /root 2>&1" 2>&1)
	expect_match "$out" "uid 1000" "uid inside"
	expect_match "$out" "CapEff 0000000000000000" "no caps"
	expect_match "$out" "denied EROFS /usr/x" "ro system"
	expect_match "$out" "No such file" "/root hidden"
	expect_eq "$(stat -c %u made)" 65534 "file belongs to the invoking user"
	t_assert
}

test_own_cgroup_visible_read_only() {
	grep -q cgroup2 /proc/self/mountinfo || cg1_has memory pids cpuacct || { t_skip "no cgroup hierarchy"; return; }
	if [ "$(cg_backend)" = v2 ]; then
		# Pure v2: the run's cgroup, with its limits, read-only.
		cordon_run --memory-limit 64M --pids-limit 50 -- /bin/sh -c '
			cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max
			echo dirs: $(find /sys/fs/cgroup -mindepth 1 -type d | wc -l)
			echo procs: $(sort -n /sys/fs/cgroup/cgroup.procs | head -1)
			echo 1 >/sys/fs/cgroup/memory.max 2>/dev/null || echo write refused
			mkdir /sys/fs/cgroup/sub 2>/dev/null || echo mkdir refused'
		expect_eq "$OUT" $'67108864\n50\ndirs: 0\nprocs: 1\nwrite refused\nmkdir refused' "v2 view: $ERR"
		expect_match "$(field '[.denials[] | .target] | join(",")')" "/sys/fs/cgroup/memory.max" "the write is on record"
	fi
	# v1 (a hybrid host): each controller of the run's own cgroup below
	# /sys/fs/cgroup, read-only; nothing above it, no sibling runs.
	[ "$(cg_backend)" = v1 ] && cordon_run --memory-limit 64M --pids-limit 50 -- /bin/sh -c '
		cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max
		echo top: $(ls /sys/fs/cgroup)
		echo dirs: $(find /sys/fs/cgroup -mindepth 2 -type d | wc -l)
		echo procs: $(cat /sys/fs/cgroup/pids/cgroup.procs | sort -n | head -1)
		echo 1 >/sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo write refused
		mkdir /sys/fs/cgroup/memory/sub 2>/dev/null || echo mkdir refused'
	if [ "$(cg_backend)" = v1 ]; then
		expect_eq "$OUT" $'67108864\n50\ntop: cpuacct memory pids\ndirs: 0\nprocs: 1\nwrite refused\nmkdir refused' "v1 view: $ERR"
		expect_match "$(field '[.denials[] | .target] | join(",")')" "/sys/fs/cgroup/memory/memory.limit_in_bytes" "the write is on record"
	fi
	# v2: the run's cgroup directory is /sys/fs/cgroup itself.
	CORDON_CGROUP=v2 cordon_run -- /bin/sh -c '
		test -e /sys/fs/cgroup/cgroup.procs && echo v2 view
		echo dirs: $(find /sys/fs/cgroup -mindepth 1 -type d | wc -l)
		echo 1 >/sys/fs/cgroup/cgroup.kill 2>/dev/null || echo kill refused'
	expect_eq "$OUT" $'v2 view\ndirs: 0\nkill refused' "v2 view: $ERR"
	# A path the task asks for there wins over the view.
	# (The run's own cgroup is there while it runs: in the v2 root, beside
	# the rest.)
	cordon_run --ro /sys/fs/cgroup -- ls /sys/fs/cgroup
	expect_eq "$(printf '%s\n' "$OUT" | grep -v '^cordon-[0-9]*-[0-9]*$')" "$(ls /sys/fs/cgroup | grep -v '^cordon-[0-9]*-[0-9]*$')" "--ro /sys/fs/cgroup shows the host's hierarchy, as asked: $ERR"
	# No cgroup, no view; the run still starts.
	CORDON_CGROUP=none cordon_run -- /bin/sh -c 'ls /sys/fs/cgroup 2>/dev/null || echo none'
	expect_eq "$OUT:$RC" "none:0" "without a cgroup: $ERR"
	t_assert
}

test_cpu_counts_visible_read_only() {
	# os.cpu_count() and thread pools read /sys/devices/system/cpu/online:
	# the three count files are there, read-only, and nothing else of it.
	cordon_run -- /bin/sh -c '
		/usr/bin/python3 -c "import concurrent.futures as f, os; print(os.cpu_count() > 0, list(f.ThreadPoolExecutor().map(abs, [-1])))"
		echo $(ls /sys/devices/system/cpu)
		echo 0 >/sys/devices/system/cpu/online 2>/dev/null || echo write refused'
	expect_eq "$OUT" $'True [1]\nonline possible present\nwrite refused' "cpu counts: $ERR"
	expect_eq "$(field '[.denials[] | .target] | join(",")')" "/sys/devices/system/cpu/online" "only the write is a denial"
	t_assert
}

test_own_hostname_resolves() {
	# Kerberos, LDAP and Java look up their own hostname: it resolves on the
	# run's loopback from /etc/hosts, with no DNS query (a network denial).
	cordon_run -- /bin/sh -c '
		getent ahosts "$(hostname)" | head -1
		/usr/bin/python3 -c "import socket; print(socket.getfqdn())"
		grep -c . /etc/hosts
		echo x >>/etc/hosts 2>/dev/null || echo write refused'
	# The host's own "127.0.1.1 HOSTNAME" line (Debian's installer writes
	# one) is not in the run's copy: getfqdn() would answer with the host's name.
	local n
	n=$(grep . /etc/hosts | grep -vc '^127\.0\.1\.1[[:space:]]')
	expect_eq "$OUT" "127.0.1.1       STREAM cordon"$'\ncordon\n'"$((n + 1))"$'\nwrite refused' "own name: $ERR"
	expect_eq "$(field '[.denials[] | select(.kind=="network")] | length')" 0 "no DNS query"
	t_assert
}

for t in test_identity test_host_uid_is_never_root test_host_processes_invisible \
	test_files_outside_view_invisible test_readonly_binds_refuse_writes test_readonly_is_recursive \
	test_dev_is_minimal_and_readonly test_command_has_no_capability_over_the_run \
	test_workspace_writable_owned_by_invoker test_workspace_without_idmapped_mounts test_tmpfs_and_private_tmp test_environment_is_clean \
	test_only_std_fds test_stdin_passed test_output_streams_as_it_arrives \
	test_stdout_stderr_counted_and_hashed test_no_controlling_terminal test_host_sees_no_mounts \
	test_symlink_planted_in_workspace_refused test_outputs_listed test_cwd_option \
	test_unprivileged_user test_own_cgroup_visible_read_only test_cpu_counts_visible_read_only \
	test_own_hostname_resolves; do
	t_run $t
done

# A mount point below a writable path is made and opened relative to the
# directory init verified above it, never by path: a run of the same user
# sharing the workspace that swaps that directory (a) for a link into the
# host's root (/oldroot in init's view) between the verification and the
# last component's creation gets nothing made outside the sandbox (review 3
# F3: mkdirat by path from the root made the user's $TGT/cmnt on the host).
# The swap is made at that very point (tests/syscall_hook.py: the entry of
# init's call on the last component), not raced for. As uid 65534, whose
# directory the target is (root's init in its user namespace may not write
# there anyway).
test_mount_point_parent_swapped_for_a_link() {
	[ "$(uname -m)" = x86_64 ] || { t_skip "tests/syscall_hook.py knows x86_64's system call numbers only"; return; }
	local tgt=$WS/tgt
	mkdir -p w/a/b w/a/cmnt "$tgt"
	ln -s "/oldroot$tgt" w/lnk
	chown -hR 65534:65534 w "$tgt"
	local swap="/usr/bin/python3 -c 'import ctypes; ctypes.CDLL(None).renameat2(-100, b\"$WS/w/a\", -100, b\"$WS/w/lnk\", 2)'"
	(cd w && setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$TOP/tests/syscall_hook.py" -f -n \
		mkdirat,mknodat,openat2,openat 1 '^(cmnt|[^/].*/a/cmnt)$' "$swap" -- \
		"$CORDON" run --workspace-mode direct --ro "$BUILD" --tmpfs "$WS/w/a/b" --tmpfs "$WS/w/a/cmnt" -- true) 2>"$T_TMP/err"
	expect_match "$(cat "$T_TMP/err")" "syscall_hook: ran at [a-z0-9]+\\((cmnt|.*/a/cmnt)\\)" "swapped before the last component"
	[ -L w/a ] || fail "w/a is not the link now"
	expect_eq "$(ls -A "$tgt")" "" "nothing made through the link ($(cat "$T_TMP/err"))"
	t_assert
}
t_run test_mount_point_parent_swapped_for_a_link
