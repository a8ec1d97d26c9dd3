#!/usr/bin/python3
"""holdloop.py CMD...: runs CMD (a cordon run) under ptrace and, once its
observer thread is running (the supervisor has read init's seccomp
listener), holds the supervisor's main thread at the entry of each
epoll_wait (its event loop) until init (its child) has exited or waits in
recvmsg for the supervisor. A supervisor that reads nothing from the
command's start to init's end, whatever the machine's load: the slow
supervisor of tests/integration/run-edges.sh, test_exec_ok_read_late.
Says "holdloop: held until init exited" on stderr when a hold ended that
way (else after its bound, 60 s); exits with CMD's status."""
import ctypes, os, signal, sys, time

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
TRACEME, SYSCALL, SETOPTIONS, GET_SYSCALL_INFO = 0, 24, 0x4200, 0x420E
O_TRACESYSGOOD, O_EXITKILL = 1, 0x100000
NR_EPOLL_WAIT, NR_RECVMSG = 232, 47  # x86_64


def children(pid):
    out = []
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def state(pid):
    """'gone', 'waits' (blocked in recvmsg: it needs the supervisor) or 'runs'."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read().rsplit(")", 1)[1].split()[0]
        if st in "ZX":
            return "gone"
        with open("/proc/%d/syscall" % pid) as f:
            nr = f.read().split()[0]
        return "waits" if st == "S" and nr == str(NR_RECVMSG) else "runs"
    except (OSError, IndexError):
        return "gone"


def hold(pid):
    if len(os.listdir("/proc/%d/task" % pid)) < 2:
        return  # no observer yet: the command's execve waits for it
    end = time.monotonic() + 60
    while time.monotonic() < end:
        s = [state(k) for k in children(pid)]
        if "runs" not in s:
            if s and all(x == "gone" for x in s):
                print("holdloop: held until init exited", file=sys.stderr)
            return
        time.sleep(0.001)
    print("holdloop: released after 60 s, init still running", file=sys.stderr)


pid = os.fork()
if pid == 0:
    libc.ptrace(TRACEME, 0, None, None)
    os.kill(os.getpid(), signal.SIGSTOP)
    os.execvp(sys.argv[1], sys.argv[1:])
os.waitpid(pid, 0)
libc.ptrace(SETOPTIONS, pid, None, ctypes.c_void_p(O_TRACESYSGOOD | O_EXITKILL))
info = ctypes.create_string_buffer(88)
sig = 0
while True:
    libc.ptrace(SYSCALL, pid, None, ctypes.c_void_p(sig))
    sig = 0
    _, st = os.waitpid(pid, 0x40000000)  # __WALL
    if os.WIFEXITED(st):
        sys.exit(os.WEXITSTATUS(st))
    if os.WIFSIGNALED(st):
        sys.exit(128 + os.WTERMSIG(st))
    s = os.WSTOPSIG(st)
    if s == signal.SIGTRAP | 0x80:
        libc.ptrace(GET_SYSCALL_INFO, pid, ctypes.c_void_p(88), info)
        if info.raw[0] == 1 and int.from_bytes(info.raw[24:32], "little") == NR_EPOLL_WAIT:
            hold(pid)
    elif s != signal.SIGTRAP:
        sig = s
