#!/usr/bin/python3
"""Test servers on the host's loopback, for the egress tests.
  netserver.py http PORTFILE DIR   serve DIR over HTTP/1.0 (keeps running)
  netserver.py echo PORTFILE       echo every byte back (threaded)
  netserver.py big  PORTFILE N     send N MiB to every client, then close
  netserver.py hold PORTFILE [N]   accept, send N bytes ("g"; none without N),
                                   read nothing, close nothing
  netserver.py upgrade PORTFILE LOG  answer 101 (Upgrade: what was asked; h2c for
                                   a path with "h2c") to every request, then
                                   append every byte it got to LOG
The chosen port is written to PORTFILE. Each stops by itself after 120 s."""
import functools, http.server, os, socket, socketserver, sys, threading, time

kind, portfile = sys.argv[1], sys.argv[2]
threading.Timer(120, lambda: os._exit(0)).start()

class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass

class TS(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512

if kind == "http":
    srv = TS(("127.0.0.1", 0), functools.partial(Quiet, directory=sys.argv[3]))
elif kind == "echo":
    class Echo(socketserver.BaseRequestHandler):
        def handle(self):
            while True:
                d = self.request.recv(65536)
                if not d:
                    return
                self.request.sendall(d)
    srv = TS(("127.0.0.1", 0), Echo)
elif kind == "big":
    n = int(sys.argv[3])
    class Big(socketserver.BaseRequestHandler):
        def handle(self):
            chunk = b"z" * (1 << 20)
            try:
                for _ in range(n):
                    self.request.sendall(chunk)
            except OSError:
                pass
    srv = TS(("127.0.0.1", 0), Big)
elif kind == "hold":
    class Hold(socketserver.BaseRequestHandler):
        def handle(self):
            if len(sys.argv) > 3:
                self.request.sendall(b"g" * int(sys.argv[3]))
            time.sleep(120)  # returning would shut the socket down
    srv = TS(("127.0.0.1", 0), Hold)
elif kind == "upgrade":
    log = sys.argv[3]
    class Up(socketserver.BaseRequestHandler):
        def handle(self):
            b = b""
            while b"\r\n\r\n" not in b:
                d = self.request.recv(4096)
                if not d:
                    return
                b += d
            asked = [l.split(b":", 1)[1].strip() for l in b.split(b"\r\n") if l.lower().startswith(b"upgrade:")]
            proto = b"h2c" if b"h2c" in b.split(b"\r\n")[0] else (asked or [b"none"])[0]
            self.request.sendall(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + proto + b"\r\n\r\n")
            self.request.settimeout(5)
            try:
                while True:
                    d = self.request.recv(4096)
                    if not d:
                        break
                    b += d
            except OSError:
                pass
            with open(log, "ab") as f:
                f.write(b + b"\n====\n")
    srv = TS(("127.0.0.1", 0), Up)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
