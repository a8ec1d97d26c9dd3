#!/usr/bin/python3
"""syscall_hook.py [-f] [-n] [-H HOLDFILE] SYSCALL[,SYSCALL...] ARG REGEX SHELL -- CMD...:
runs CMD under ptrace (-f: its children too) and, at the entry of the first
SYSCALL whose string argument number ARG (0-based) matches REGEX (-n: made
by a process in another pid namespace than this one: cordon's init and
below, not the supervisor), runs SHELL (sh -c) and
waits for it before the call goes on: a swap "between two system calls"
made at the very point a race would have to hit, on any machine. Says
"syscall_hook: ran at SYSCALL(PATH)" on stderr when it did; exits with
CMD's status. x86_64 system call numbers. SHELL has the caller's tid in
$HOOK_PID. -H: a tracee whose pid SHELL wrote into HOLDFILE (one per line)
is held at its next stop, never resumed (SIGKILL still ends it): a process
made to lose a race it would win, without a signal it could see."""
import ctypes, os, re, signal, subprocess, sys

NR = {"openat": 257, "mkdirat": 258, "mknodat": 259, "linkat": 265, "renameat": 264, "renameat2": 316, "openat2": 437, "open": 2, "execve": 59}
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
TRACEME, SYSCALL, SETOPTIONS, GET_SYSCALL_INFO = 0, 24, 0x4200, 0x420E
O_TRACESYSGOOD, O_TRACEFORK, O_TRACEVFORK, O_TRACECLONE, O_EXITKILL = 1, 2, 4, 8, 0x100000

args = sys.argv[1:]
follow = other_ns = False
holdfile = None
while args[0] in ("-f", "-n", "-H"):
    if args[0] == "-H":
        holdfile = args[1]
        args = args[2:]
        continue
    follow |= args[0] == "-f"
    other_ns |= args[0] == "-n"
    args = args[1:]
names, argn, rx, shell = args[0], int(args[1]), re.compile(args[2]), args[3]
assert args[4] == "--"
nrs = {NR[n]: n for n in names.split(",")}
my_ns = os.readlink("/proc/self/ns/pid")


def in_other_ns(t):
    try:
        return os.readlink("/proc/%d/ns/pid" % t) != my_ns
    except OSError:
        return False

cmd = args[5:]


def string_at(pid, addr):
    try:
        with open("/proc/%d/mem" % pid, "rb", buffering=0) as m:
            m.seek(addr)
            return m.read(4096).split(b"\0", 1)[0].decode(errors="replace")
    except (OSError, ValueError, OverflowError):
        return ""


pid = os.fork()
if pid == 0:
    libc.ptrace(TRACEME, 0, None, None)
    os.kill(os.getpid(), signal.SIGSTOP)
    os.execvp(cmd[0], cmd)
os.waitpid(pid, 0)
opts = O_TRACESYSGOOD | O_EXITKILL | (O_TRACEFORK | O_TRACEVFORK | O_TRACECLONE if follow else 0)
libc.ptrace(SETOPTIONS, pid, None, ctypes.c_void_p(opts))
info = ctypes.create_string_buffer(88)
done = False
live = {pid}
libc.ptrace(SYSCALL, pid, None, None)
rc = 0
held = set()


def to_hold(t):
    if not holdfile or not done:
        return False
    if not held:
        try:
            with open(holdfile) as f:
                held.update(int(x) for x in f.read().split())
        except (OSError, ValueError):
            return False
    return t in held


while live:
    try:
        t, st = os.waitpid(-1, 0x40000000)  # __WALL
    except ChildProcessError:
        break
    if os.WIFEXITED(st) or os.WIFSIGNALED(st):
        live.discard(t)
        if t == pid:
            rc = os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)
        continue
    live.add(t)
    s, sig = os.WSTOPSIG(st), 0
    if s == signal.SIGTRAP | 0x80:
        if not done:
            libc.ptrace(GET_SYSCALL_INFO, t, ctypes.c_void_p(88), info)
            r = info.raw
            nr = int.from_bytes(r[24:32], "little")
            if r[0] == 1 and nr in nrs and (not other_ns or in_other_ns(t)):
                name = nrs[nr]
                p = string_at(t, int.from_bytes(r[32 + 8 * argn:40 + 8 * argn], "little"))
                if rx.search(p):
                    done = True
                    subprocess.run(["sh", "-c", shell], env=dict(os.environ, HOOK_PID=str(t)))
                    print("syscall_hook: ran at %s(%s)" % (name, p), file=sys.stderr)
    elif s == signal.SIGTRAP or (st >> 16) or s == signal.SIGSTOP:
        pass  # exec, fork/clone events, a new tracee's first stop
    else:
        sig = s
    if to_hold(t):
        continue
    libc.ptrace(SYSCALL, t, None, ctypes.c_void_p(sig))
sys.exit(rc)
