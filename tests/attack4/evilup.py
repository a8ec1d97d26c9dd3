#!/usr/bin/python3
"""Hostile TLS upstream on 127.0.0.1: evilup.py PORTFILE CERT KEY.
Reads one request head, takes the Authorization value A, answers per path:
  /bigloc   301 whose Location reflects the long query, plus ordinary headers
            (head > 16 KiB though the request was under it), A in X-Auth
  /badcl    two different Content-Lengths, A in the body
  /head     HEAD answered with a body that holds A
  /extra    a good 200, then a second unsolicited response holding A
  /badchunk a chunk holding half of A, broken framing, then the rest raw
  /upgrade  101 then A on the raw stream
  /gzip     Content-Encoding: gzip body holding A (no Accept-Encoding asked)
  /ok       200 Content-Length body holding A (control: filtered)"""
import gzip, socket, ssl, sys, threading
pf, cert, key = sys.argv[1:4]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(cert, key)
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(16)
open(pf, "w").write(str(ls.getsockname()[1]))
def handle(c):
    try:
        s = ctx.wrap_socket(c, server_side=True)
        d = b""
        while b"\r\n\r\n" not in d:
            x = s.recv(65536)
            if not x: return
            d += x
        head = d.split(b"\r\n\r\n")[0].decode("latin1")
        line = head.split("\r\n")[0]; meth, path = line.split(" ")[:2]
        a = b""
        for h in head.split("\r\n")[1:]:
            k, _, v = h.partition(":")
            if k.lower() == "authorization": a = v.strip().encode("latin1")
        p = path.split("?")[0]
        if p == "/bigloc":
            csp = b"Content-Security-Policy: default-src 'self'; " + b"script-src 'self' https://cdn.example; " * 12 + b"\r\n"
            s.sendall(b"HTTP/1.1 301 Moved\r\nLocation: https://localhost" + path.encode() + b"\r\n" + csp + b"X-Auth: " + a + b"\r\nContent-Length: 0\r\n\r\n")
        elif p == "/badcl":
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Length: 1\r\n\r\n%s" % (len(a), a))
        elif p == "/head":
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(a), a))
        elif p == "/extra":
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(a), a))
        elif p == "/badchunk":
            h = len(a) // 2
            s.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\nZZ\r\n%s" % (h, a[:h], a[h:]))
        elif p == "/upgrade":
            s.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n" + a)
        elif p == "/gzip":
            z = gzip.compress(a)
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(z), z))
        else:
            s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(a), a))
        try: s.unwrap()
        except Exception: pass
        s.close()
    except Exception as e:
        print("evilup:", e, file=sys.stderr)
ls.settimeout(120)
while True:
    try: c, _ = ls.accept()
    except socket.timeout: break
    threading.Thread(target=handle, args=(c,), daemon=True).start()
