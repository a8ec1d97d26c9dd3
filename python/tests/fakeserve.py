"""A small stand-in for `cordon serve`: the API's shape on a Unix socket
(README, "cordon serve"), so that the client's HTTP, NDJSON and Upgrade
handling is tested without the server. It runs nothing: `echo ARGS` prints
ARGS, `cat` prints its stdin, `fail` writes to stderr and exits 3, `hang`
waits for a signal."""
import base64
import http.server
import json
import os
import socketserver
import threading
import urllib.parse


class State:
    def __init__(self):
        self.sessions = {}
        self.runs = {}
        self.requests = []  # (method, path, body or None)
        self.n = 0
        self.lock = threading.Lock()
        self.signalled = threading.Event()

    def new_id(self, prefix):
        with self.lock:
            self.n += 1
            return f"{prefix}-{self.n:08x}"


def _fake_exec(argv, stdin):
    if argv[:1] == ["echo"]:
        return [("stdout", (" ".join(argv[1:]) + "\n").encode())], "ok", 0
    if argv[:1] == ["cat"]:
        return [("stdout", stdin)], "ok", 0
    if argv[:1] == ["fail"]:
        return [("stdout", b"partial"), ("stderr", b"it failed\n")], "exit-nonzero", 3
    return [], "ok", 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State = None

    def log_message(self, *a):
        pass

    def address_string(self):
        return "unix"

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, code, obj=None, raw=None, ctype="application/json"):
        data = raw if raw is not None else (json.dumps(obj).encode() if obj is not None else b"")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _err(self, code, msg):
        self._send(code, {"error": msg})

    def _route(self, method):
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query)
        parts = [p for p in u.path.split("/") if p]
        body = self._body()
        self.state.requests.append((method, self.path, body, dict(self.headers)))
        st = self.state
        if parts[:2] == ["v1", "sessions"] and len(parts) == 2 and method == "POST":
            req = json.loads(body or b"{}")
            if req.get("policy", {}).get("limits", {}).get("memory") == "1T":
                return self._err(403, "unauthorized: limits.memory 1T exceeds the ceiling")
            sid = st.new_id("s")
            st.sessions[sid] = {"policy": req.get("policy"), "execs": [], "files": {}}
            return self._send(201, {"id": sid})
        if parts[:2] == ["v1", "runs"]:
            if method == "POST":
                req = json.loads(body)
                rid = st.new_id("r")
                out, status, code = _fake_exec(req["argv"], (req.get("stdin") or "").encode())
                rep = {"schema": "cordon.report/1", "id": rid, "status": status, "exit_code": code,
                       "signal": None, "command": req["argv"], "limits_hit": [], "denials": []}
                st.runs[rid] = rep
                return self._send(200, rep)
            if len(parts) == 3 and parts[2] in st.runs:
                return self._send(200, st.runs[parts[2]])
            return self._err(404, "no such run")
        if parts[:2] != ["v1", "sessions"] or len(parts) < 3:
            return self._err(404, "no such endpoint")
        sid = parts[2]
        s = st.sessions.get(sid)
        if s is None:
            return self._err(404, f"no such session {sid}")
        rest = parts[3:]
        if not rest:
            if method == "GET":
                return self._send(200, {"id": sid, "state": "running", "execs": len(s["execs"])})
            if method == "DELETE":
                del st.sessions[sid]
                return self._send(200, {"schema": "cordon.report/1", "status": "ok", "exit_code": 0,
                                        "signal": None, "session": {"id": sid},
                                        "execs": [{"status": e["status"], "exit_code": e["exit_code"],
                                                   "command": e["argv"]} for e in s["execs"]]})
        if rest == ["files"]:
            path = q.get("path", [""])[0]
            if method == "PUT":
                s["files"][path] = body
                return self._send(204)
            if path not in s["files"]:
                return self._err(404, f"{path}: no such file")
            if method == "GET":
                return self._send(200, raw=s["files"][path], ctype="application/octet-stream")
            if method == "DELETE":
                del s["files"][path]
                return self._send(204)
        if rest == ["files", "list"]:
            return self._send(200, {"entries": [{"name": n, "type": "file", "size": len(d), "mode": 0o644}
                                                for n, d in sorted(s["files"].items())]})
        if rest == ["exec"] and method == "POST":
            return self._exec(s, json.loads(body))
        if len(rest) >= 2 and rest[0] == "exec":
            e = next((e for e in s["execs"] if e["id"] == rest[1]), None)
            if e is None:
                return self._err(404, "no such exec")
            if len(rest) == 2 and method == "GET":
                return self._send(200, {k: v for k, v in e.items() if k != "argv"})
            if rest[2:] == ["signal"]:
                e["signal_sent"] = json.loads(body)["signal"]
                st.signalled.set()
                return self._send(200, {})
            if rest[2:] == ["resize"]:
                e["size"] = json.loads(body)
                return self._send(200, {})
        return self._err(405, "method not allowed")

    def _exec(self, s, req):
        eid = self.state.new_id("e")
        e = {"id": eid, "argv": req["argv"], "status": None, "exit_code": None, "request": req}
        s["execs"].append(e)
        if req.get("pty"):
            if self.headers.get("Upgrade") != "tcp" or "upgrade" not in self.headers.get("Connection", "").lower():
                return self._err(400, "a pty exec needs Connection: Upgrade, Upgrade: tcp")
            # The first bytes of the terminal go out with the 101 itself.
            self.wfile.write(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
                             b"Cordon-Exec: " + eid.encode() + b"\r\n\r\n$ ")
            self.wfile.flush()
            while True:
                d = self.rfile.read1(65536)
                if not d:
                    break
                self.wfile.write(d.replace(b"\n", b"\r\n") + d.upper().replace(b"\n", b"\r\n"))
                self.wfile.flush()
            e.update(status="ok", exit_code=0)
            self.close_connection = True
            return
        stdin = req["stdin"].encode() if "stdin" in req else base64.b64decode(req.get("stdin_b64", ""))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def event(obj):
            line = json.dumps(obj).encode() + b"\n"
            # a line split over two chunks, as a server may send it
            half = len(line) // 2
            for part in (line[:half], line[half:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()

        event({"type": "started", "exec": eid})
        if req["argv"][:1] == ["hang"]:
            self.state.signalled.wait(30)
            out, status, code, sig = [], "signaled", None, "SIGTERM"
        else:
            out, status, code = _fake_exec(req["argv"], stdin)
            sig = None
        for kind, data in out:
            event({"type": kind, "data_b64": base64.b64encode(data).decode()})
        e.update(status=status, exit_code=code)
        event({"type": "result", "exec": eid, "status": status, "exit_code": code, "signal": sig,
               "denials": [], "usage": {"wall_seconds": 0.001}})
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_PUT(self):
        self._route("PUT")

    def do_DELETE(self):
        self._route("DELETE")


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def start(path):
    state = State()
    handler = type("H", (Handler,), {"state": state})
    srv = Server(path, handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    return srv, state
