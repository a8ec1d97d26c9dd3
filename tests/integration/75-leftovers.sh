# Everything the run leaves is hostile: no setuid/setgid file or file
# capability comes out of a run, and the writable roots keep their mode and
# owner (SECURITY.md, "What a run leaves behind").
. "$(dirname "$0")/../lib.sh"

# Regular files with a privilege bit below the workspace, one per line.
priv_files() { find "$WS" -xdev -type f -perm /6000 | sort; }

# The hostile program of the report: a shell copy made setuid/setgid by every
# call that can set a mode.
SUID_SCRIPT='
import ctypes, errno, os, shutil, stat
shutil.copy("/bin/sh", "x")
def try_(what, f):
    try:
        f(); print(what, "ok")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
try_("chmod 6755", lambda: os.chmod("x", 0o6755))
try_("chmod 2755", lambda: os.chmod("x", 0o2755))
fd = os.open("x", os.O_RDONLY)
try_("fchmod 4755", lambda: os.fchmod(fd, 0o4755))
libc = ctypes.CDLL(None, use_errno=True)
def fchmodat2():
    if libc.syscall(452, -100, b"x", 0o4755, 0x100) < 0:
        raise OSError(ctypes.get_errno(), "fchmodat2")
try_("fchmodat2", fchmodat2)
try_("open O_CREAT 4755", lambda: os.close(os.open("y", os.O_CREAT | os.O_WRONLY, 0o4755)))
try_("open O_TMPFILE 2755", lambda: os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o2755)))
try_("mknod S_IFREG 6755", lambda: os.mknod("z", stat.S_IFREG | 0o6755))
how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
r = libc.syscall(437, -100, b"w", how, 24)
print("openat2", errno.errorcode[ctypes.get_errno()] if r < 0 else "ok")
try_("setxattr security.capability", lambda: os.setxattr("x", "security.capability",
     bytes.fromhex("01000002" + "ffffffff" * 2 + "00000000" * 2)))
os.mkdir("d")
try_("chmod g+s directory", lambda: os.chmod("d", 0o2755))
'

test_setuid_file_refused_and_reported() {
	# cp /bin/sh x; chmod 6755 x gave any local user euid 0 on the host.
	cordon_run -- /usr/bin/python3 -c "$SUID_SCRIPT"
	expect_eq "$OUT" "chmod 6755 EPERM
chmod 2755 EPERM
fchmod 4755 EPERM
fchmodat2 EPERM
open O_CREAT 4755 EPERM
open O_TMPFILE 2755 EPERM
mknod S_IFREG 6755 EPERM
openat2 ENOSYS
setxattr security.capability EPERM
chmod g+s directory EPERM" "each way to a privilege bit: $ERR"
	expect_eq "$(field '[.denials[] | select(.kind=="syscall") | .target] | sort | join(",")')" \
		"chmod(mode 02755),chmod(mode 06755),fchmod(mode 04755),fchmodat2(mode 04755),mknodat(mode 06755),openat(mode 02755),openat(mode 04755)" \
		"each refusal is a denial"
	expect_eq "$(field .verdicts.containment)" violations "containment"
	expect_eq "$(priv_files)" "" "no setuid/setgid file on the host"
	expect_eq "$(stat -c %a d)" 755 "a setgid directory is refused too (F1: the check raced)"
	expect_eq "$(python3 -c 'import os; print("security.capability" in os.listxattr("x"))')" False "no file capability"
	# The copy does not give an ordinary user root.
	expect_eq "$(setpriv --reuid=65534 --regid=65534 --clear-groups ./x -p -c 'id -u' 2>&1)" 65534 "no euid 0"
	t_assert
}

test_setgid_race_is_swept() {
	# A S_ISGID chmod of a directory used to be let through after the
	# supervisor saw a directory; swapping a file in after the check
	# (RENAME_EXCHANGE) got the bit onto the file: a setgid-root binary. Every
	# S_ISGID chmod is refused now, so there is no race to win.
	cat >race.py <<'PY'
import ctypes, os, stat, threading
os.mkdir("d"); open("f", "w").write("x"); os.chmod("f", 0o755)
libc = ctypes.CDLL(None, use_errno=True)
stop = False
def swap():
    while not stop:
        libc.renameat2(-100, b"d", -100, b"f", 2)  # RENAME_EXCHANGE
t = threading.Thread(target=swap); t.start()
raced = False
for i in range(20000):
    try: os.chmod("f", 0o2755)
    except OSError: pass
    if any(stat.S_ISREG(os.lstat(n).st_mode) and os.lstat(n).st_mode & stat.S_ISGID for n in ("d", "f")):
        raced = True; break
stop = True; t.join()
print("raced" if raced else "not raced")
PY
	cordon_run -- /usr/bin/python3 race.py
	expect_eq "$OUT" "not raced" "no S_ISGID chmod goes through: $ERR"
	expect_eq "$(priv_files)" "" "no setgid file on the host"
	expect_eq "$(field '[.denials[] | select(.kind=="syscall") | .target] | unique | join(",")')" \
		"chmod(mode 02755)" "the chmods are denials"
	expect_eq "$(field .verdicts.containment)" violations "containment"
	t_assert
}

# A privilege bit that got onto a file by a way the first layer missed is
# simulated from the host while the run waits: the run builds the tree,
# writes "ready", waits for "go"; the host sets the bit in between.
WAIT_GO='
import os, time
open("ready", "w").close()
for i in range(1200):
    if os.path.exists("go"): break
    time.sleep(0.05)
'
# host_set_bit CHMOD-PYTHON: in the background, once the run is ready.
host_set_bit() {
	(
		for _ in $(seq 1 1200); do [ -e "$WS/ready" ] && break; sleep 0.05; done
		cd "$WS" && python3 -c "$1"
		touch "$WS/go"
	) &
}

test_deep_file_swept() {
	# F1(a): below 300 directories the snapshot is cut (walk depth), so the
	# full sweep runs; it stopped at depth 256 and left the file setgid.
	# Direct mode: the host reaches the run's files while it is alive, and
	# the sweep is direct mode's (an overlay's apply strips the bits:
	# 78-overlay, test_special_files_and_setid_refused).
	host_set_bit 'import os; os.chmod("/".join(["a"] * 300) + "/py", 0o2755)'
	cordon_run --workspace-mode direct -- /usr/bin/python3 -c '
import os, shutil
os.makedirs("/".join(["a"] * 300))
shutil.copy("/bin/true", "/".join(["a"] * 300) + "/py")
'"$WAIT_GO"
	wait
	expect_eq "$(field '.truncated.outputs.reason')" walk-depth "the snapshot was cut: $ERR"
	expect_eq "$(priv_files)" "" "the bit is cleared below depth 256"
	expect_eq "$(field '[.privilege_cleared[] | .path | length > 600] | join(",")')" true "listed"
	expect_match "$(field '.privilege_cleared[0].what')" '^mode 02755 -> 0755$' "what was cleared"
	expect_eq "$(field .privilege_sweep)" null "the sweep was complete"
	expect_eq "$(field .verdicts.containment)" violations "containment"
	t_assert
}

test_long_path_file_swept() {
	# F1(b): 20 levels of 250-byte names (~5,000 bytes, > PATH_MAX): the walk
	# is not cut, the change list names the file, and opening it by its path
	# failed, silently. Now that failure makes the sweep walk every file.
	host_set_bit 'import os
fd = os.open(".", os.O_RDONLY)
for i in range(20): fd = os.open("L" * 250, os.O_RDONLY, dir_fd=fd)
os.chmod("py", 0o2755, dir_fd=fd)'
	cordon_run --workspace-mode direct -- /usr/bin/python3 -c '
import os, shutil
fd = os.open(".", os.O_RDONLY)
for i in range(20):
    os.mkdir("L" * 250, dir_fd=fd); fd = os.open("L" * 250, os.O_RDONLY, dir_fd=fd)
src = os.open("/bin/true", os.O_RDONLY); dst = os.open("py", os.O_WRONLY | os.O_CREAT, 0o755, dir_fd=fd)
os.write(dst, os.read(src, 1 << 20))
'"$WAIT_GO"
	wait
	expect_eq "$(field '.truncated.outputs.reason // "none"')" none "the snapshot was not cut: $ERR"
	expect_eq "$(priv_files)" "" "the bit is cleared at a path longer than PATH_MAX"
	expect_eq "$(field '[.privilege_cleared[] | .path | length > 5000] | join(",")')" true "listed"
	expect_eq "$(field .verdicts.containment)" violations "containment"
	t_assert
}

test_workspace_root_mode_restored() {
	# chmod 0777 of the workspace itself, as seen from the host; a file
	# bound writable is a root too.
	chmod 750 "$WS"
	echo data >bound
	chmod 640 bound
	cordon_run --rw "$WS/bound" -- /bin/sh -c "chmod 0777 . && chmod 0666 $WS/bound && stat -c %a . $WS/bound"
	expect_eq "$OUT" $'777\n666' "the run changed the modes: $ERR"
	expect_eq "$(stat -c %a "$WS") $(stat -c %a bound)" "750 640" "modes put back"
	expect_eq "$(field '[.root_restored[] | "\(.path) \(.what)"] | sort | join(",")')" \
		". mode 0777 -> 0750,bound mode 0666 -> 0640" "listed in the report"
	expect_eq "$(field '.privilege_cleared | length')" 0 "nothing else"
	t_assert
}

# The same on a filesystem without idmapped mounts (ramfs; tmpfs before
# 6.3), where the workspace is handed to the run's uid: a file bound --rw is
# a tree of its own there too.
test_workspace_root_mode_restored_without_idmap() {
	[ "$(id -u)" = 0 ] || { t_skip "needs root (to mount a ramfs)"; return; }
	mkdir r && mount -t ramfs -o mode=755 ramfs r || { t_skip "cannot mount a ramfs"; return; }
	cd r || return 1
	local ws=$PWD
	chmod 750 .
	echo data >bound
	chmod 640 bound
	cordon_run --rw "$ws/bound" -- /bin/sh -c "chmod 0777 . && chmod 0666 $ws/bound && stat -c %a . $ws/bound"
	expect_eq "$OUT" $'777\n666' "the run changed the modes: $ERR"
	expect_eq "$(stat -c '%a %u' . bound | tr '\n' ' ')" "750 $(id -u) 640 $(id -u) " "modes and owners put back"
	expect_eq "$(field '[.root_restored[] | "\(.path) \(.what)"] | sort | join(",")')" \
		". mode 0777 -> 0750,bound mode 0666 -> 0640" "listed in the report"
	cd .. && umount r
	t_assert
}

test_clean_run_lists_nothing() {
	cordon_run -- /bin/sh -c 'echo x >f; chmod 755 f; mkdir d'
	expect_eq "$(field '.privilege_cleared | length') $(field '.root_restored | length')" "0 0" "nothing swept"
	expect_eq "$(field .verdicts.containment)" clean "containment"
	t_assert
}

test_unprivileged_run_same_rules() {
	if ! setpriv --reuid=65534 --regid=65534 --clear-groups unshare -U true 2>/dev/null; then
		echo "SKIP-REFUSED: unprivileged user namespaces are disabled on this host"; return 1
	fi
	chown 65534:65534 "$WS"
	chmod 755 "$WS"
	R=$WS/../$(basename "$WS").report.json
	# Direct mode: the root's mode is put back by the sweep (an overlay's
	# chmod of its root never reaches the host: 78-overlay).
	OUT=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CORDON" run --workspace-mode direct --report "$R" --ro "$BUILD" -- \
		/bin/sh -c 'cp /bin/sh x; chmod 4755 x || echo refused; chmod 0777 .' 2>/dev/null)
	keep_report "$R"
	expect_eq "$OUT" refused "chmod 4755 refused"
	expect_eq "$(priv_files)" "" "no setuid file"
	expect_eq "$(stat -c '%a %u' "$WS")" "755 65534" "root's mode put back"
	expect_eq "$(field '.denials[0].target')" "fchmodat(mode 04755)" "reported"
	expect_eq "$(field '.root_restored[0].what')" "mode 0777 -> 0755" "restore reported"
	rm -f "$R"
	t_assert
}

for t in test_setuid_file_refused_and_reported test_setgid_race_is_swept test_deep_file_swept \
	test_long_path_file_swept test_workspace_root_mode_restored test_workspace_root_mode_restored_without_idmap \
	test_clean_run_lists_nothing test_unprivileged_run_same_rules; do
	t_run $t
done
