#!/usr/bin/python3
"""Inside the run: rawclient.py PORT PATH [METHOD] [EXTRA-HEADER...]: one raw
request through the proxy's CONNECT with the placeholder from $TOKEN as
Authorization; prints everything that comes back (until close or 5 s)."""
import os, socket, ssl, sys
port, path = sys.argv[1], sys.argv[2]
meth = sys.argv[3] if len(sys.argv) > 3 else "GET"
extra = "".join(h + "\r\n" for h in sys.argv[4:])
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n" % (port.encode(), port.encode()))
r = b""
while b"\r\n\r\n" not in r: r += s.recv(1)
t = ssl.create_default_context().wrap_socket(s, server_hostname="localhost")
t.sendall(("%s %s HTTP/1.1\r\nHost: localhost:%s\r\nAuthorization: Bearer %s\r\n%s\r\n" % (meth, path, port, os.environ["TOKEN"], extra)).encode())
t.settimeout(5)
out = b""
try:
    while True:
        x = t.recv(65536)
        if not x: break
        out += x
except Exception as e:
    out += b"\n[client: %s]" % str(e).encode()
sys.stdout.buffer.write(out)
