#!/usr/bin/python3
"""An HTTPS test server on the host's 127.0.0.1, for the interception tests.
  tlsserver.py PORTFILE LOG CERT KEY DIR [USER:PASS]
Serves DIR (GET, HEAD; HTTP/1.1 keep-alive), answers any other method with
"ok METHOD PATH", and appends every request's method, path and headers to
LOG as a JSON line (with every Host and Connection line, the TLS SNI, and
the raw body of any other method: chunk framing and trailers included); every response echoes the Authorization header as X-Echo.
GET /echo/{cl,chunked,eof} echoes it in the body too (raw, hex and base64),
framed by Content-Length, as 5-byte chunks, or to the close; the slow
variants write it in 5-byte pieces. With USER:PASS, paths under /git/ need that Basic
credential (401 with a challenge otherwise, as git expects). The chosen port
is written to PORTFILE (the environment's TLSSERVER_PORT, if set, is the
port to listen on). Stops by itself after 120 s."""
import base64, functools, http.server, json, os, socketserver, ssl, sys, threading

portfile, log, cert, key, root = sys.argv[1:6]
need = sys.argv[6] if len(sys.argv) > 6 else None
threading.Timer(120, lambda: os._exit(0)).start()
lock = threading.Lock()

class H(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def end_headers(self):
        # Echo the credential back: the proxy must not hand the value to the run.
        self.send_header("X-Echo", self.headers.get("Authorization", ""))
        super().end_headers()

    def record(self, body=None):
        with lock, open(log, "a") as f:
            f.write(json.dumps({"m": self.command, "p": self.path, "h": dict(self.headers),
                                "hosts": self.headers.get_all("Host") or [], "sni": getattr(self.request, "sni", None),
                                "conn": self.headers.get_all("Connection") or [], "body": body}) + "\n")

    def authorized(self):
        if not need or not self.path.startswith("/git/"):
            return True
        if self.headers.get("Authorization", "") == "Basic " + base64.b64encode(need.encode()).decode():
            return True
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="t"')
        self.send_header("Content-Length", "0")
        self.end_headers()
        return False

    def echo(self):
        a = self.headers.get("Authorization", "").encode()
        body = b"auth=" + a + b"\nhex=" + a.hex().encode() + b"\nb64=" + base64.b64encode(a) + b"\nend\n"
        how = self.path[len("/echo/"):]
        pieces = [body[i:i + 5] for i in range(0, len(body), 5)]
        self.send_response(200)
        if how == "cl":
            self.send_header("Content-Length", str(len(body)))
        elif how == "chunked":
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        for p in pieces:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(p), p) if how == "chunked" else p)
            self.wfile.flush()
        if how == "chunked":
            self.wfile.write(b"0\r\nX-Trailer: " + a + b"\r\n\r\n")

    def do_GET(self):
        self.record()
        if self.path.startswith("/echo/"):
            self.echo()
        elif self.authorized():
            super().do_GET()

    def do_HEAD(self):
        self.record()
        if self.authorized():
            super().do_HEAD()

    def other(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":  # logged raw, framing and trailers
            while True:
                line = self.rfile.readline()
                body += line
                size = int(line.split(b";")[0], 16)
                if not size:
                    break
                body += self.rfile.read(size + 2)
            while True:
                line = self.rfile.readline()
                body += line
                if line in (b"\r\n", b""):
                    break
        self.record(body.decode("latin1"))
        out = ("ok %s %s\n" % (self.command, self.path)).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_POST = do_PUT = do_DELETE = other

class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

srv = S(("127.0.0.1", int(os.environ.get("TLSSERVER_PORT", "0"))), functools.partial(H, directory=root))
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
def sni(sock, name, _ctx):  # the name the client (the proxy) asked for, logged as "sni"
    sock.sni = name
ctx.sni_callback = sni
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
