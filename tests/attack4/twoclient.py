#!/usr/bin/python3
"""Inside the run: twoclient.py PORT PAD: on one intercepted connection,
(1) GET /pub/a.txt with "Authorization: Bearer $TOKEN" followed by PAD
bytes of padding (the upstream reflects it as X-Echo: its response head
passes 16 KiB though the request's did not), then (2) GET /echo/cl with
"Authorization: Bearer $TOKEN". Prints all that comes back."""
import os, socket, ssl, sys, time
port, pad = sys.argv[1], int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n" % (port.encode(), port.encode()))
r = b""
while b"\r\n\r\n" not in r: r += s.recv(1)
t = ssl.create_default_context().wrap_socket(s, server_hostname="localhost")
tok = os.environ["TOKEN"]
t.sendall(("GET /pub/a.txt HTTP/1.1\r\nHost: localhost:%s\r\nAuthorization: Bearer %s%s\r\n\r\n" % (port, tok, "p" * pad)).encode())
time.sleep(1)
t.sendall(("GET /echo/cl HTTP/1.1\r\nHost: localhost:%s\r\nAuthorization: Bearer %s\r\n\r\n" % (port, tok)).encode())
t.settimeout(3)
out = b""
try:
    while True:
        x = t.recv(65536)
        if not x: break
        out += x
except Exception as e:
    out += b"\n[client: %s]" % str(e).encode()
sys.stdout.buffer.write(out)
