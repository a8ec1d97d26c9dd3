"""A client of `cordon serve`: HTTP/1.1 + JSON over its Unix socket, with the
standard library only (http.client on an AF_UNIX socket).

    with cordon.Client("/run/cordon.sock").session(policy={...}) as s:
        r = s.exec(["python3", "-c", "print(1)"])
        s.files.write("task.py", b"...")
The session is always ended (DELETE) when the with block ends; its report
is then in s.report."""
import base64
import contextlib
import http.client
import ipaddress
import json
import random
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ._proto import (Event, ExecResult, FileEntry, _collect, _error, _exec_body, _Lines, _run_body,
                     _run_report, _session_body)
from .errors import CordonError, ServerUnreachable
from .report import Report


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: Optional[float] = None):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.timeout is not None:
            s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except OSError:
            s.close()
            raise
        self.sock = s


@dataclass
class Retry:
    """How a Client retries a request the server refused for now (429: a
    limit of the server, such as --max-runs; 503: shutting down, its
    request bodies' budget): nothing was done, so the same request is sent
    again after a pause that doubles from ``initial`` up to ``maximum``
    seconds, with full jitter (a random part of it), and never shorter
    than the server's Retry-After; no attempt starts after ``deadline``
    seconds from the first. ``Client(retry=None)`` does not retry."""
    deadline: float = 60.0
    initial: float = 0.2
    maximum: float = 5.0

    def pause(self, attempt: int, retry_after: Optional[str]) -> float:
        cap = min(self.maximum, self.initial * (2 ** attempt))
        p = random.uniform(cap / 2, cap)
        try:
            p = max(p, float(retry_after)) if retry_after else p
        except ValueError:
            pass  # an HTTP date: the backoff alone
        return p


class PtyConnection:
    """A pty exec's connection after the upgrade: raw bytes both ways, like
    a socket (send, sendall, recv, fileno, shutdown, close), plus resize."""

    def __init__(self, session: "Session", sock: socket.socket, exec_id: Optional[str], buffered: bytes):
        self._session = session
        self._sock = sock
        self.exec_id = exec_id
        self._buf = buffered

    def recv(self, n: int = 65536) -> bytes:
        if self._buf:
            out, self._buf = self._buf[:n], self._buf[n:]
            return out
        return self._sock.recv(n)

    def send(self, data: bytes) -> int:
        return self._sock.send(data)

    def sendall(self, data: bytes) -> None:
        self._sock.sendall(data)

    def fileno(self) -> int:
        return self._sock.fileno()

    def settimeout(self, t: Optional[float]) -> None:
        self._sock.settimeout(t)

    def shutdown(self, how: int = socket.SHUT_WR) -> None:
        self._sock.shutdown(how)

    def resize(self, rows: int, cols: int) -> None:
        if not self.exec_id:
            raise CordonError("the server named no exec id for this pty (no resize)")
        self._session._client._json("POST", f"{self._session._path}/exec/{self.exec_id}/resize",
                                    {"rows": rows, "cols": cols})

    def result(self) -> Dict[str, Any]:
        """GET the exec's state (its result once it ended)."""
        if not self.exec_id:
            raise CordonError("the server named no exec id for this pty")
        return self._session.exec_info(self.exec_id)

    def close(self) -> None:
        self._sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Files:
    """A session's files, through the boundary's rules."""

    def __init__(self, session: "Session"):
        self._s = session

    def _q(self, path: Union[str, bytes]) -> str:
        # bytes: a name that is not UTF-8, percent-encoded as it is
        return "?" + urllib.parse.urlencode({"path": path})

    def read(self, path: Union[str, bytes]) -> bytes:
        return self._s._client._call("GET", f"{self._s._path}/files{self._q(path)}")

    def write(self, path: Union[str, bytes], data, parents: bool = True) -> None:
        """Create or truncate path with data (str: UTF-8). A relative path is
        the session's cwd's (Session.cwd). parents: make missing directories
        on the way (as mkdir -p); False: a missing one is an error (404)."""
        if isinstance(data, str):
            data = data.encode()
        q = self._q(path) + ("" if parents else "&parents=0")
        self._s._client._call("PUT", f"{self._s._path}/files{q}", data,
                              {"Content-Type": "application/octet-stream"})

    def delete(self, path: Union[str, bytes]) -> None:
        self._s._client._call("DELETE", f"{self._s._path}/files{self._q(path)}")

    def list(self, path: str = ".") -> List[FileEntry]:
        j = self._s._client._json("GET", f"{self._s._path}/files/list{self._q(path)}")
        return [FileEntry(e.get("name"), e.get("type"), e.get("size"), e.get("mode"),
                          base64.b64decode(e["name_b64"]) if "name_b64" in e else
                          (e.get("name") or "").encode())
                for e in j.get("entries", [])]


def _events(resp) -> Iterator[Event]:
    """The NDJSON stream's events, read in large pieces (no per-byte or
    per-line read calls): the client keeps up with the exec's output."""
    lines = _Lines()
    while True:
        chunk = resp.read1(1 << 20) if hasattr(resp, "read1") else resp.read(1 << 16)
        if not chunk:
            break
        yield from lines.feed(chunk)
    yield from lines.end()


class ExecHandle:
    """A background exec (Session.exec(..., background=True)): it runs on
    while the client does other things, until it ends or the session does.
    Its output waits in the server for output() or wait() (each byte is
    given once: what one call took, the next does not get again)."""

    def __init__(self, session: "Session", exec_id: str):
        self._session = session
        self.id = exec_id

    def info(self) -> Dict[str, Any]:
        """GET the exec: {"state": "running"} or its result event."""
        return self._session.exec_info(self.id)

    @property
    def running(self) -> bool:
        return self.info().get("state") == "running"

    def result(self) -> Optional["ExecResult"]:
        """Its result once it ended (without output: see wait), else None."""
        j = self.info()
        if j.get("type") != "result":
            return None
        return ExecResult(j.get("exec", self.id), j.get("status"), j.get("exit_code"), j.get("signal"),
                          j.get("denials", []), j.get("usage", {}), b"", b"", j)

    def stream(self, follow: bool = True) -> Iterator[Event]:
        """Its events not read yet (GET .../output): with follow, until its
        result; without, what the server holds now."""
        path = f"{self._session._path}/exec/{self.id}/output" + ("" if follow else "?follow=0")
        return self._session._client._stream("GET", path, None)

    def output(self) -> Tuple[bytes, bytes]:
        """(stdout, stderr) it wrote that no call took yet; does not wait."""
        out, err = [], []
        for ev in self.stream(follow=False):
            if ev.type == "stdout":
                out.append(ev.data)
            elif ev.type == "stderr":
                err.append(ev.data)
        return b"".join(out), b"".join(err)

    def wait(self, timeout: Optional[float] = None) -> "ExecResult":
        """Wait for its end: its result, with the output not taken before.
        timeout (seconds): CordonError if it is still running by then (it
        runs on)."""
        if timeout is not None:
            end = time.monotonic() + timeout
            pause = 0.05
            while self.running:
                if time.monotonic() >= end:
                    raise CordonError(f"exec {self.id} still runs after {timeout:g}s")
                time.sleep(min(pause, max(0.0, end - time.monotonic())))
                pause = min(pause * 2, 1.0)
        return _collect(self.stream(follow=True), f"exec {self.id}")

    def signal(self, sig: str = "TERM") -> None:
        self._session.signal(self.id, sig)

    def kill(self) -> None:
        self._session.signal(self.id, "KILL")


class Session:
    """One long-lived boundary of a server. A context manager: it is always
    ended (DELETE) on the way out, and its report kept in .report."""

    def __init__(self, client: "Client", session_id: str, warm: bool = False,
                 workspace: Optional[str] = None, cwd: Optional[str] = None):
        self._client = client
        self.id = session_id
        #: the session's workspace, as its runs see it (the same path)
        self.workspace = workspace
        #: where its execs start (the policy's cwd, else the workspace); a
        #: relative files path or exec cwd is this directory's
        self.cwd = cwd
        #: taken from the server's warm pool (`cordon serve --warm N`)
        self.warm = warm
        self._path = f"/v1/sessions/{urllib.parse.quote(session_id, safe='')}"
        self.files = Files(self)
        self.report: Optional[Report] = None
        self._closed = False
        self._on_close = None  # Pool: this session no longer counts on its server

    @property
    def server(self) -> str:
        """The server this session lives on (its URL or socket path): a
        session lives on one server; every call about it goes there."""
        return self._client.address

    @property
    def handle(self) -> Dict[str, str]:
        """{"server", "id"}: what to keep to reach this session again
        (Pool.attach, Client.attach), e.g. from another process."""
        return {"server": self.server, "id": self.id}

    def info(self) -> Dict[str, Any]:
        return self._client._json("GET", self._path)

    def changes(self, snapshot: Optional[str] = None) -> Dict[str, Any]:
        """The session's change set as it is now (overlay or review mode):
        {"changes": [{"path", "change", "type", "bytes", "sha256"}], "diff",
        "diff_truncated", ...} (docs/api.md, GET /v1/sessions/{id}/changes);
        with snapshot, that snapshot's against the session's lower tree
        (GET .../snapshots/{sid}/changes, "snapshot" besides)."""
        if snapshot is not None:
            return self._client._json(
                "GET", f"{self._path}/snapshots/{urllib.parse.quote(snapshot, safe='')}/changes")
        return self._client._json("GET", f"{self._path}/changes")

    def pause(self) -> Dict[str, Any]:
        """Freeze every process of the session; its clocks stop (docs/api.md,
        POST /v1/sessions/{id}/pause): {"state": "paused", "frozen", ...}."""
        return self._client._json("POST", f"{self._path}/pause")

    def resume(self) -> Dict[str, Any]:
        """Thaw it; its clocks go on from their time left."""
        return self._client._json("POST", f"{self._path}/resume")

    def snapshot(self) -> Dict[str, Any]:
        """A snapshot of the workspace (its changes), taken with the session
        frozen (docs/api.md, Snapshots): {"snapshot": "p-...", "bytes",
        "files", "entries", "created"}. 429 past limits.snapshots."""
        return self._client._json("POST", f"{self._path}/snapshots")

    def snapshots(self) -> Dict[str, Any]:
        """{"snapshots": [...], "bytes", "budget"}."""
        return self._client._json("GET", f"{self._path}/snapshots")

    def delete_snapshot(self, snapshot: str) -> Dict[str, Any]:
        """Remove one snapshot: {"deleted": snapshot}."""
        return self._client._json("DELETE", f"{self._path}/snapshots/{urllib.parse.quote(snapshot, safe='')}")

    def snapshot_changeset(self, snapshot: str) -> Dict[str, Any]:
        """The snapshot's changes kept as a sealed change set beside the
        session's (docs/api.md, POST .../snapshots/{sid}/changeset), for
        `cordon apply DIR`: {"dir", "snapshot", "hosts", "bytes", "files",
        "entries"}."""
        return self._client._json(
            "POST", f"{self._path}/snapshots/{urllib.parse.quote(snapshot, safe='')}/changeset")

    def restore(self, snapshot: str) -> Dict[str, Any]:
        """The workspace back to snapshot; running execs are ended first
        (their status "restored"): {"restored": snapshot}."""
        return self._client._json("POST", f"{self._path}/restore", {"snapshot": snapshot})

    def fork(self, snapshot: Optional[str] = None) -> "Session":
        """A new session of the same request whose workspace starts at
        snapshot (or now); independent of this one. Use it in a with block."""
        j = self._client._json("POST", f"{self._path}/fork", {"snapshot": snapshot} if snapshot else {})
        if not isinstance(j.get("id"), str):
            raise CordonError(f"the server returned no session id: {j!r}")
        return Session(self._client, j["id"], workspace=j.get("workspace"), cwd=j.get("cwd"))

    def exec_stream(self, argv: Sequence[str], env=None, cwd=None, stdin=None, timeout=None) -> Iterator[Event]:
        """The exec's events as they arrive (the output is not buffered)."""
        body = json.dumps(_exec_body(argv, env, cwd, stdin, timeout)).encode()
        return self._client._stream("POST", f"{self._path}/exec", body)

    def exec(self, argv: Sequence[str], env=None, cwd=None, stdin=None, timeout=None,
             background: bool = False) -> Union[ExecResult, ExecHandle]:
        """Run argv in the session and wait for its result (output collected).
        cwd: absolute, or relative to the session's cwd (Session.cwd).
        background=True: do not wait; an ExecHandle at once (its output,
        result, signals, wait), the exec running on until it ends or the
        session does."""
        if background:
            j = self._client._json("POST", f"{self._path}/exec",
                                   _exec_body(argv, env, cwd, stdin, timeout, background=True))
            if not isinstance(j.get("exec"), str) or not j["exec"]:
                raise CordonError(f"the server started no background exec: {j!r}")
            return ExecHandle(self, j["exec"])
        return _collect(self.exec_stream(argv, env=env, cwd=cwd, stdin=stdin, timeout=timeout), "exec")

    def signal(self, exec_id: str, sig: str = "TERM") -> None:
        self._client._json("POST", f"{self._path}/exec/{exec_id}/signal", {"signal": sig})

    def exec_info(self, exec_id: str) -> Dict[str, Any]:
        return self._client._json("GET", f"{self._path}/exec/{exec_id}")

    def pty(self, argv: Sequence[str], env=None, cwd=None, timeout=None,
            rows: Optional[int] = None, cols: Optional[int] = None) -> PtyConnection:
        """Run argv on a pty of the session's own: the connection is upgraded
        (HTTP 101) and carries the terminal's bytes both ways."""
        body = _exec_body(argv, env, cwd, None, timeout, pty=True)
        if rows and cols:
            body["rows"], body["cols"] = rows, cols
        data = json.dumps(body).encode()
        sock = self._client._socket()
        try:
            auth = "".join(f"{k}: {v}\r\n" for k, v in self._client._auth().items())
            head = (f"POST {self._path}/exec HTTP/1.1\r\nHost: localhost\r\n{auth}"
                    f"Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n").encode()
            sock.sendall(head + data)
            buf = b""
            while b"\r\n\r\n" not in buf:
                chunk = sock.recv(4096)
                if not chunk:
                    raise CordonError("the server closed the connection before its answer")
                buf += chunk
                if len(buf) > 65536:
                    raise CordonError("the server's answer has no end of headers")
            head_b, rest = buf.split(b"\r\n\r\n", 1)
            lines = head_b.decode("iso-8859-1").split("\r\n")
            parts = lines[0].split(" ", 2)
            status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
            headers = {}
            for l in lines[1:]:
                k, _, v = l.partition(":")
                headers[k.strip().lower()] = v.strip()
            if status != 101:
                n = int(headers.get("content-length", "0") or 0)
                while len(rest) < n:
                    chunk = sock.recv(n - len(rest))
                    if not chunk:
                        break
                    rest += chunk
                raise _error(status, rest)
            exec_id = headers.get("cordon-exec") or headers.get("x-cordon-exec")
            return PtyConnection(self, sock, exec_id, rest)
        except BaseException:
            sock.close()
            raise

    def close(self) -> Optional[Report]:
        """End the session (DELETE); its report, with every exec. Idempotent.
        A session that has ended by itself (its idle or wall timeout) gives
        its report all the same, while the server keeps it."""
        if not self._closed:
            self._closed = True
            try:
                self.report = Report.from_dict(self._client._json("DELETE", self._path))
            finally:
                if self._on_close:
                    self._on_close()
        return self.report

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Client:
    """A `cordon serve`: on a Unix socket (`Client(path)`), or on TCP with a
    bearer token (`Client(url="https://HOST:PORT", token=..., ca="ca.pem")`,
    the server's `--listen`, `--token-file` and `--tls-cert`).

    https: the server's certificate is checked against ``ca`` (a PEM file
    of the CA, or the certificate itself), else the system's CAs; verify=
    False checks nothing (tests only: anyone on the path then reads the
    token). http: only to a loopback address, unless insecure=True (a
    mesh or private network encrypts it): the token is in every request."""

    def __init__(self, socket_path: Optional[str] = None, timeout: Optional[float] = None, *,
                 url: Optional[str] = None, token: Optional[str] = None,
                 retry: Optional[Retry] = Retry(), ca: Optional[str] = None, verify: bool = True,
                 insecure: bool = False):
        if (socket_path is None) == (url is None):
            raise ValueError("give a socket path or a url, not both")
        self.socket_path = str(socket_path) if socket_path is not None else None
        self.timeout = timeout
        self.token = token
        #: 429 and 503 retried with backoff (Retry); None or False: not retried
        self.retry = retry
        self.url = url
        self._host: Optional[Tuple[str, int]] = None
        self._tls: Optional[ssl.SSLContext] = None
        if url is not None:
            u = urllib.parse.urlsplit(url)
            if u.scheme not in ("http", "https") or not u.hostname or not u.port:
                raise ValueError(f"url: http://HOST:PORT or https://HOST:PORT expected, not {url!r}")
            self._host = (u.hostname, u.port)
            if u.scheme == "https":
                self._tls = ssl.create_default_context(cafile=ca)
                if not verify:
                    self._tls.check_hostname = False
                    self._tls.verify_mode = ssl.CERT_NONE
            elif token and not insecure and not _loopback(u.hostname):
                raise ValueError(f"url {url!r}: the token would cross the network in clear: use https:// "
                                 "(the server's --tls-cert), or insecure=True where a mesh protects it")
        elif ca is not None:
            raise ValueError("ca: for an https:// url")

    def _conn(self) -> http.client.HTTPConnection:
        if self._host and self._tls:
            return http.client.HTTPSConnection(self._host[0], self._host[1], timeout=self.timeout,
                                               context=self._tls)
        if self._host:
            return http.client.HTTPConnection(self._host[0], self._host[1], timeout=self.timeout)
        return _UnixHTTPConnection(str(self.socket_path), self.timeout)

    @property
    def address(self) -> str:
        """The server's URL, or its socket path."""
        return self.url if self.url is not None else self.socket_path

    def attach(self, session_id: str) -> "Session":
        """A Session for a session of this server's made before (by id):
        its info is fetched, so a session that is not there raises."""
        s = Session(self, session_id)
        j = s.info()
        s.workspace, s.cwd = j.get("workspace"), j.get("cwd")
        return s

    def _where(self) -> str:
        return f"cordon serve at {self.url}" if self._host else f"cordon serve at socket {self.socket_path}"

    def _unreachable(self, e: BaseException) -> CordonError:
        return ServerUnreachable(f"{self._where()}: {type(e).__name__}: {e}")

    def _respond(self, method: str, path: str, body: Optional[bytes], headers: Dict[str, str]):
        """(conn, response) of a request, 429 and 503 retried per
        self.retry; a refusal raised as CordonError, the connection closed."""
        start = time.monotonic()
        attempt = 0
        while True:
            conn = self._conn()
            try:
                try:
                    conn.request(method, path, body, {**headers, **self._auth()})
                    resp = conn.getresponse()
                except (OSError, http.client.HTTPException) as e:
                    raise self._unreachable(e) from e
                if resp.status < 400:
                    return conn, resp
                data = resp.read()
                ra = resp.getheader("Retry-After")
            except BaseException:
                conn.close()
                raise
            conn.close()
            if resp.status in (429, 503) and self.retry:
                p = self.retry.pause(attempt, ra)
                if time.monotonic() - start + p <= self.retry.deadline:
                    time.sleep(p)
                    attempt += 1
                    continue
            raise _error(resp.status, data)

    def _stream(self, method: str, path: str, body: Optional[bytes]) -> Iterator[Event]:
        """An NDJSON stream's events, until its result."""
        conn, resp = self._respond(method, path, body, {"Content-Type": "application/json"} if body else {})
        try:
            try:
                for ev in _events(resp):
                    yield ev
                    if ev.type == "result":
                        break
            except (OSError, http.client.HTTPException) as e:
                raise self._unreachable(e) from e
        finally:
            conn.close()

    def _auth(self) -> Dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def _socket(self) -> socket.socket:
        try:
            if self._host:
                s = socket.create_connection(self._host, timeout=self.timeout)
                if self._tls:
                    try:
                        return self._tls.wrap_socket(s, server_hostname=self._host[0])
                    except OSError:
                        s.close()
                        raise
                return s
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout)
            try:
                s.connect(str(self.socket_path))
            except OSError:
                s.close()
                raise
            return s
        except OSError as e:
            raise self._unreachable(e) from e

    def _call(self, method: str, path: str, body: Optional[bytes] = None,
              headers: Optional[Dict[str, str]] = None) -> bytes:
        conn, resp = self._respond(method, path, body, headers or {})
        try:
            return resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise self._unreachable(e) from e
        finally:
            conn.close()

    def _json(self, method: str, path: str, obj: Any = None) -> Any:
        body = json.dumps(obj).encode() if obj is not None else None
        data = self._call(method, path, body, {"Content-Type": "application/json"} if body else None)
        return json.loads(data) if data.strip() else {}

    def session(self, policy: Optional[Dict[str, Any]] = None, idle_timeout=None, timeout=None) -> Session:
        """A new session (POST /v1/sessions); use it in a with block."""
        j = self._json("POST", "/v1/sessions", _session_body(policy, idle_timeout, timeout))
        if not isinstance(j.get("id"), str):
            raise CordonError(f"the server returned no session id: {j!r}")
        return Session(self, j["id"], warm=j.get("warm") is True, workspace=j.get("workspace"), cwd=j.get("cwd"))

    def sessions(self) -> List[Dict[str, Any]]:
        """This client's sessions (GET /v1/sessions; root's: all): running
        ones and ended ones whose report the server keeps,
        [{"id", "state": "running"|"ending"|"ended", ...}]."""
        return self._json("GET", "/v1/sessions").get("sessions", [])

    def session_report(self, session_id: str) -> Report:
        """The report of a session that has ended (GET
        /v1/sessions/{id}/report), while the server keeps it."""
        return Report.from_dict(self._json("GET", f"/v1/sessions/{urllib.parse.quote(session_id, safe='')}/report"))

    def pool(self) -> Dict[str, Any]:
        """The warm pool's state (GET /v1/pool): size, ready, starting,
        policy, hits, misses, failures."""
        return self._json("GET", "/v1/pool")

    def version(self) -> Dict[str, Any]:
        """GET /v1/version: {"version": the program's, "api": 1}."""
        return self._json("GET", "/v1/version")

    def health(self) -> bool:
        """Is the server ready (GET /v1/health, which needs no token)? False
        when it answers 503 (shutting down); CordonError when unreachable."""
        conn = self._conn()
        try:
            conn.request("GET", "/v1/health")
            resp = conn.getresponse()
            resp.read()
            return resp.status == 200
        except (OSError, http.client.HTTPException) as e:
            raise self._unreachable(e) from e
        finally:
            conn.close()

    def metrics(self) -> str:
        """The server's metrics (GET /v1/metrics), Prometheus text."""
        return self._call("GET", "/v1/metrics").decode()

    def run(self, argv: Sequence[str], policy=None, stdin=None, timeout=None) -> Report:
        """A one-shot run (POST /v1/runs): its report."""
        body = _run_body(argv, policy, stdin, timeout)
        return _run_report(self._json("POST", "/v1/runs", body))

    def get_run(self, run_id: str) -> Report:
        return _run_report(self._json("GET", f"/v1/runs/{urllib.parse.quote(run_id, safe='')}"))


class Pool:
    """Sessions and one-shot runs spread over several `cordon serve`s (the
    replicas of a cluster service, docs/serve-cluster.md). A session lives
    on the server that made it: the Session keeps its Client (session.server,
    session.handle), and every call about it goes there.

        pool = cordon.Pool(["https://10.0.0.5:8443", "https://10.0.0.6:8443"],
                           token=tok, ca="ca.pem")
        with pool.session() as s: ...

    servers: Clients, or URLs / socket paths made into Clients with
    client_kw (token=, ca=, timeout=, retry=...). A new session or run goes
    to the server with the fewest of this pool's sessions and runs under
    way (ties in turn, round-robin); a server that cannot be reached, or
    refuses for now (429, 503: full), is skipped for the next one, and the
    error is raised only when every server failed."""

    def __init__(self, servers: Sequence[Union[str, "Client"]], **client_kw):
        if not servers:
            raise ValueError("Pool: at least one server")
        kw = dict(client_kw)
        # One round over the servers is the pool's retry: a full server is
        # skipped at once (its own retries unless asked for).
        kw.setdefault("retry", None)
        # A socket is authenticated by its peer's uid: no token, no TLS.
        sock_kw = {k: v for k, v in kw.items() if k not in ("token", "ca", "verify", "insecure")}
        self.clients: List[Client] = [c if isinstance(c, Client) else
                                      Client(url=c, **kw) if "://" in str(c) else Client(str(c), **sock_kw)
                                      for c in servers]
        self._load = [0] * len(self.clients)
        self._next = 0
        self._lock = threading.Lock()

    def load(self) -> Dict[str, int]:
        """Sessions and runs of this pool under way, per server."""
        with self._lock:
            return {c.address: n for c, n in zip(self.clients, self._load)}

    def _order(self) -> List[int]:
        with self._lock:
            n = len(self.clients)
            turn = [(self._next + k) % n for k in range(n)]
            self._next = (self._next + 1) % n
            return sorted(turn, key=lambda i: self._load[i])  # stable: ties in turn

    def _place(self, what):
        """what(client) on the first server of _order that takes it: (index,
        its result), the index's load taken (the caller gives it back)."""
        last: Optional[BaseException] = None
        for i in self._order():
            with self._lock:
                self._load[i] += 1
            try:
                return i, what(self.clients[i])
            except ServerUnreachable as e:
                last = e
            except CordonError as e:
                if e.status not in (429, 503):
                    self._release(i)
                    raise
                last = e
            self._release(i)
        assert last is not None
        raise last

    def _release(self, i: int) -> None:
        with self._lock:
            self._load[i] -= 1

    def session(self, policy: Optional[Dict[str, Any]] = None, idle_timeout=None, timeout=None) -> Session:
        """A new session on the least-loaded server (Client.session)."""
        i, s = self._place(lambda c: c.session(policy=policy, idle_timeout=idle_timeout, timeout=timeout))
        s._on_close = lambda: self._release(i)
        return s

    def run(self, argv: Sequence[str], policy=None, stdin=None, timeout=None) -> Report:
        """A one-shot run on the least-loaded server (Client.run); the
        report's ``server`` names the one that ran it."""
        i, r = self._place(lambda c: c.run(argv, policy=policy, stdin=stdin, timeout=timeout))
        self._release(i)
        r.server = self.clients[i].address
        return r

    @contextlib.contextmanager
    def client(self) -> Iterator["Client"]:
        """The least-loaded server that answers ready (GET /v1/health), held
        for a block of calls that belong together (a task's runs): it
        counts as one under way until the block ends.

            with pool.client() as c:
                before = c.run(...); after = c.run(...)"""
        def ready(c):
            if not c.health():
                raise ServerUnreachable(f"{c._where()}: not ready")
            return c
        i, c = self._place(ready)
        try:
            yield c
        finally:
            self._release(i)

    def attach(self, handle: Dict[str, str]) -> Session:
        """The session of a handle (Session.handle) on its server, which
        must be one of the pool's; it counts on that server until closed."""
        for i, c in enumerate(self.clients):
            if c.address == handle.get("server"):
                s = c.attach(handle["id"])
                with self._lock:
                    self._load[i] += 1
                s._on_close = lambda: self._release(i)
                return s
        raise ValueError(f"server {handle.get('server')!r} is not one of this pool's")
