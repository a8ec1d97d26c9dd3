#!/usr/bin/env python3
"""bench/cost.py BUILD [N]: cost per run (issue 34), cordon beside bubblewrap,
interleaved in one call.

Each round runs /bin/true once under bubblewrap (the same namespaces and a
minimal view), once under cordon in its default mode (overlay workspace,
--memory-limit 256M --pids-limit 64, seccomp, Landlock, a report) and once
in --workspace-mode direct, in a rotating order (drift in the machine's speed
falls on all alike). Wall time is measured around each process; CPU is its
rusage (wait4: it and every descendant it waited for, which is the whole run
for both), and so are its minor page faults (on a virtual machine whose
page faults exit to the hypervisor, as costly as system calls). The figures
are the medians of the pairwise ratios (each cordon
run over the bubblewrap run of its round), as the issue states the goal:
wall <= 1.0x and CPU <= 2.0x in default mode.
Then 20 at once: runs per second of each, 20 in flight until 40 ended, in
interleaved rounds (BENCH_COST_ROUNDS, 5) of bubblewrap, default and direct;
the median of the per-round ratios.
Numbers only: no threshold is checked here (make bench prints, CI does not
time anything)."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
N = int(sys.argv[2]) if len(sys.argv) > 2 else int(os.environ.get("BENCH_COST_RUNS", "40"))
CORDON = os.path.join(BUILD, "cordon")
BWRAP = "/usr/bin/bwrap"


def bwrap_argv(ws):
    return [BWRAP, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
            "--ro-bind", "/etc", "/etc", "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
            "--tmpfs", "/tmp", "--bind", ws, ws, "--chdir", ws, "--clearenv", "--setenv", "PATH", "/usr/bin:/bin",
            "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL", "/bin/true"]


def cordon_argv(ws, mode):
    a = [CORDON, "run", "--memory-limit", "256M", "--pids-limit", "64", "--report", os.path.join(ws, "..", "r.json")]
    if mode == "direct":
        a += ["--workspace-mode", "direct"]
    return a + ["--", "/bin/true"]


def one(argv, cwd):
    """(wall seconds, cpu seconds, exit status, minor page faults) of one
    process and the descendants it waited for."""
    t = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                                                                   (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)])
    _, st, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t
    return wall, ru.ru_utime + ru.ru_stime, os.waitstatus_to_exitcode(st), ru.ru_minflt


def throughput(argv_of, total, width):
    """Runs per second with width in flight until total ended."""
    t = time.monotonic()
    running, started, done = {}, 0, 0
    while done < total:
        while len(running) < width and started < total:
            argv = argv_of(started)
            pid = os.posix_spawn(argv[0], argv, os.environ,
                                 file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                                               (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)])
            running[pid] = started
            started += 1
        pid, st = os.wait()
        if pid in running:
            del running[pid]
            done += 1
            if os.waitstatus_to_exitcode(st) != 0:
                raise SystemExit("a run failed in the 20-at-once round")
    return total / (time.monotonic() - t)


def main():
    if not os.access(BWRAP, os.X_OK):
        print("cost per run: no bubblewrap (/usr/bin/bwrap): skipped")
        return 0
    top = tempfile.mkdtemp(prefix="cordon-cost.")
    ws = os.path.join(top, "ws")
    os.mkdir(ws)
    os.chmod(top, 0o755)
    os.chmod(ws, 0o777)
    os.chdir(ws)
    kinds = {"bwrap": bwrap_argv(ws), "default": cordon_argv(ws, "default"), "direct": cordon_argv(ws, "direct")}
    for k, a in kinds.items():  # warm the caches; a failure is said now
        w, c, rc, _ = one(a, ws)
        if rc != 0:
            print("cost per run: %s exits %d: %s" % (k, rc, " ".join(a)))
            return 1
    res = {k: [] for k in kinds}
    order = list(kinds)
    for i in range(N):
        for k in order[i % 3:] + order[:i % 3]:
            w, c, _, f = one(kinds[k], ws)
            res[k].append((w, c, f))
    print("cost per run: /bin/true, %d interleaved rounds (bwrap, cordon default, cordon direct)" % N)
    print("%-40s %10s %10s %10s" % ("", "wall ms", "cpu ms", "faults"))
    for k, label in (("bwrap", "bubblewrap"), ("default", "cordon, default (overlay, limits, report)"),
                     ("direct", "cordon, --workspace-mode direct")):
        print("%-40s %10.1f %10.1f %10.0f" % (label, statistics.median(r[0] for r in res[k]) * 1e3,
                                               statistics.median(r[1] for r in res[k]) * 1e3,
                                               statistics.median(r[2] for r in res[k])))
    for k in ("default", "direct"):
        wr = statistics.median(res[k][i][0] / res["bwrap"][i][0] for i in range(N))
        cr = statistics.median(res[k][i][1] / max(res["bwrap"][i][1], 1e-4) for i in range(N))
        print("median pairwise ratio cordon %-8s / bwrap: wall %.2fx (goal <= 1.0), cpu %.2fx (goal <= 2.0)"
              % (k, wr, cr))
    # 20 at once, interleaved too: rounds of 40 runs of each kind (20 in
    # flight), in a rotating order; the ratio is the median of each round's.
    rounds = int(os.environ.get("BENCH_COST_ROUNDS", "5"))
    rate = {k: [] for k in kinds}
    for r in range(rounds):
        for k in order[r % 3:] + order[:r % 3]:
            rate[k].append(throughput(lambda i, a=kinds[k]: a, 40, 20))
    print("20 at once, %d interleaved rounds of 40 runs each (runs/s, median): bubblewrap %.1f, "
          "cordon default %.1f, direct %.1f" % (rounds, statistics.median(rate["bwrap"]),
                                                statistics.median(rate["default"]), statistics.median(rate["direct"])))
    for k in ("default", "direct"):
        print("20 at once, median per-round ratio cordon %-8s / bwrap: %.2f (goal >= 1.0)"
              % (k, statistics.median(rate[k][i] / rate["bwrap"][i] for i in range(rounds))))
    print("load average during the measurement: %.1f %.1f %.1f (%d CPUs)" % (os.getloadavg() + (os.cpu_count(),)))
    subprocess.run(["rm", "-rf", top])
    return 0


if __name__ == "__main__":
    sys.exit(main())
