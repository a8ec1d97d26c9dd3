#!/usr/bin/env python3
"""Run a command (cordon) on a pseudo-terminal of its own, as a user would.

usage: ptydrive.py ROWS COLS STEPS_JSON -- COMMAND [ARG...]

STEPS_JSON is a list of steps, in order:
  ["send", TEXT]          type TEXT (\\x04 for ^D)
  ["expect", REGEX]       wait until what the terminal showed matches REGEX
  ["resize", ROWS, COLS]  change the terminal's window size (SIGWINCH)
  ["signal", NAME]        send signal NAME (TERM, HUP...) to the command
Prints one JSON object: what the terminal showed ("out", CRs kept), the exit
status, whether the terminal's mode (tcgetattr) is the same after as before,
the terminal's device (st_dev, st_rdev of its node), and the first step that
failed, if any. The waits are hang guards (60 s), not measurements.
"""
import fcntl, json, os, re, select, signal, struct, subprocess, sys, termios, time

GUARD = 60.0


def main():
    rows, cols, steps = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
    argv = sys.argv[sys.argv.index("--") + 1:]
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    before = termios.tcgetattr(slave)
    st = os.fstat(slave)

    def ctty():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                         preexec_fn=ctty, close_fds=True)
    out = b""
    failed = None

    def pump(timeout):
        nonlocal out
        r, _, _ = select.select([master], [], [], timeout)
        if r:
            try:
                d = os.read(master, 65536)
            except OSError:
                return
            out += d

    for i, step in enumerate(steps):
        if step[0] == "send":
            os.write(master, step[1].encode())
        elif step[0] == "expect":
            deadline = time.monotonic() + GUARD
            rx = re.compile(step[1].encode())
            while not rx.search(out) and time.monotonic() < deadline and p.poll() is None:
                pump(0.2)
            pump(0)
            if not rx.search(out):
                failed = f"step {i}: {step[1]!r} never showed"
                break
        elif step[0] == "resize":
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", step[1], step[2], 0, 0))
        elif step[0] == "signal":
            p.send_signal(getattr(signal, "SIG" + step[1]))
    deadline = time.monotonic() + GUARD
    while p.poll() is None and time.monotonic() < deadline:
        pump(0.2)
    if p.poll() is None:
        p.kill()
        failed = failed or "the command did not end"
    p.wait()
    while select.select([master], [], [], 0)[0]:
        try:
            d = os.read(master, 65536)
        except OSError:
            break
        if not d:
            break
        out += d
    after = termios.tcgetattr(slave)
    print(json.dumps({
        "out": out.decode(errors="replace"),
        "exit": p.returncode,
        "stderr": p.stderr.read().decode(errors="replace"),
        "mode_restored": before == after,
        "dev": st.st_dev,
        "failed": failed,
    }))


main()
