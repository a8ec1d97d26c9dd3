#!/usr/bin/env python3
"""Start a program the way systemd's socket activation does (sd_listen_fds(3)):
the listening socket as descriptor 3, LISTEN_FDS=1, LISTEN_PID the program's
own pid (this process execs it, so the pid is ours).

  sd_activate.py unix PATH -- PROGRAM ARGS...
  sd_activate.py tcp HOST PORTFILE -- PROGRAM ARGS...   (a free port, written to PORTFILE
                                                         and put for @PORT@ in ARGS)
  sd_activate.py --pid OTHER ...                         (LISTEN_PID of another process)
"""
import os
import socket
import sys

args = sys.argv[1:]
pid = None
if args[:1] == ["--pid"]:
    pid, args = args[1], args[2:]
kind = args[0]
if kind == "unix":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(args[1])
    rest = args[2:]
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((args[1], 0))
    with open(args[2], "w") as f:
        f.write("%d\n" % s.getsockname()[1])
    port = str(s.getsockname()[1])
    rest = [a.replace("@PORT@", port) for a in args[3:]]
s.listen(16)
assert rest[0] == "--"
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)  # dup2 onto itself (the socket is 3 already) keeps close-on-exec
os.environ["LISTEN_FDS"] = "1"
os.environ["LISTEN_PID"] = pid if pid is not None else str(os.getpid())
os.environ["LISTEN_FDNAMES"] = "serve"
os.execvp(rest[1], rest[1:])
