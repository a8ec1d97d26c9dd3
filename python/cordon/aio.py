"""The asyncio client of `cordon serve`: the sync Client's surface (sessions,
exec, its stream, signal, files, pty, one-shot runs), every call a
coroutine. Standard library only: HTTP/1.1 written by hand over
asyncio.open_unix_connection or open_connection, one connection a request.

    async with cordon.aio.Client("/run/cordon.sock").session() as s:
        r = await s.exec(["python3", "-c", "print(1)"])
        async for ev in s.exec_stream(["sh", "-c", "echo a; echo b"]):
            ...
The session is always ended (DELETE) when the async with block ends."""
import asyncio
import json
import time
import urllib.parse
from typing import Any, AsyncIterator, Dict, Generator, List, Optional, Sequence, Tuple, Union

from ._proto import (Event, ExecResult, FileEntry, _Collector, _error, _exec_body, _exec_result, _file_entries,
                     _file_query, _Lines, _parse_head, _pty_body, _pty_exec_id, _run_body, _run_report,
                     _session_body, _session_path, _upgrade_head)
from .client import Retry
from .errors import CordonError, ServerUnreachable
from .report import Report

__all__ = ["Client", "Session", "Files", "ExecHandle", "PtyConnection", "Event", "ExecResult", "FileEntry"]

#: the most bytes of a response's head
_HEAD_MAX = 65536


class _Response:
    """A response's status, headers and body reader (Content-Length,
    chunked, or until the server closes)."""

    def __init__(self, client: "Client", reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 status: int, headers: Dict[str, str]):
        self._client = client
        self._r = reader
        self._w = writer
        self.status = status
        self.headers = headers
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        cl = headers.get("content-length")
        self._left: Optional[int] = int(cl) if cl and cl.isdigit() and not self._chunked else None
        self._chunk_left = 0
        self._done = False

    async def read1(self) -> bytes:
        """The next piece of the body; b"" at its end."""
        if self._done:
            return b""
        try:
            if self._chunked:
                return await self._read_chunked()
            if self._left is not None:
                if self._left == 0:
                    self._done = True
                    return b""
                d = await self._client._wait(self._r.read(min(self._left, 1 << 20)))
                if not d:
                    raise CordonError("the server closed the connection inside an answer's body")
                self._left -= len(d)
                return d
            d = await self._client._wait(self._r.read(1 << 20))
            self._done = not d
            return d
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
            raise self._client._unreachable(e) from e

    async def _read_chunked(self) -> bytes:
        if self._chunk_left == 0:
            line = await self._client._wait(self._r.readuntil(b"\r\n"))
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                # the trailer: lines up to an empty one
                while (await self._client._wait(self._r.readuntil(b"\r\n"))) != b"\r\n":
                    pass
                self._done = True
                return b""
            self._chunk_left = size
        d = await self._client._wait(self._r.read(min(self._chunk_left, 1 << 20)))
        if not d:
            raise CordonError("the server closed the connection inside a chunk")
        self._chunk_left -= len(d)
        if self._chunk_left == 0:
            await self._client._wait(self._r.readexactly(2))
        return d

    async def read(self) -> bytes:
        parts = []
        while True:
            d = await self.read1()
            if not d:
                return b"".join(parts)
            parts.append(d)

    async def close(self) -> None:
        self._w.close()
        try:
            await self._w.wait_closed()
        except OSError:
            pass


class Files:
    """A session's files, through the boundary's rules."""

    def __init__(self, session: "Session"):
        self._s = session

    async def read(self, path: Union[str, bytes]) -> bytes:
        return await self._s._client._call("GET", f"{self._s._path}/files{_file_query(path)}")

    async def write(self, path: Union[str, bytes], data: Union[str, bytes], parents: bool = True) -> None:
        """Create or truncate path with data (str: UTF-8); parents: make
        missing directories on the way."""
        if isinstance(data, str):
            data = data.encode()
        q = _file_query(path) + ("" if parents else "&parents=0")
        await self._s._client._call("PUT", f"{self._s._path}/files{q}", data,
                                    {"Content-Type": "application/octet-stream"})

    async def delete(self, path: Union[str, bytes]) -> None:
        await self._s._client._call("DELETE", f"{self._s._path}/files{_file_query(path)}")

    async def list(self, path: str = ".") -> List[FileEntry]:
        return _file_entries(await self._s._client._json("GET", f"{self._s._path}/files/list{_file_query(path)}"))


class PtyConnection:
    """A pty exec's connection after the upgrade: the terminal's raw bytes
    both ways (read, write, close_input), plus resize and result."""

    def __init__(self, session: "Session", reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 exec_id: Optional[str]):
        self._session = session
        self._r = reader
        self._w = writer
        self.exec_id = exec_id

    async def read(self, n: int = 65536) -> bytes:
        """Up to n bytes of the terminal's output; b"" once it ended."""
        return await self._r.read(n)

    async def write(self, data: bytes) -> None:
        self._w.write(data)
        await self._w.drain()

    async def close_input(self) -> None:
        """No more input (the pty's end of file)."""
        if self._w.can_write_eof():
            self._w.write_eof()

    async def resize(self, rows: int, cols: int) -> None:
        if not self.exec_id:
            raise CordonError("the server named no exec id for this pty (no resize)")
        await self._session._client._json("POST", f"{self._session._path}/exec/{self.exec_id}/resize",
                                          {"rows": rows, "cols": cols})

    async def result(self) -> Dict[str, Any]:
        """GET the exec's state (its result once it ended)."""
        if not self.exec_id:
            raise CordonError("the server named no exec id for this pty")
        return await self._session.exec_info(self.exec_id)

    async def close(self) -> None:
        self._w.close()
        try:
            await self._w.wait_closed()
        except OSError:
            pass

    async def __aenter__(self) -> "PtyConnection":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class ExecHandle:
    """A background exec (Session.exec(..., background=True)); its output
    waits in the server for output() or wait(), each byte given once."""

    def __init__(self, session: "Session", exec_id: str):
        self._session = session
        self.id = exec_id

    async def info(self) -> Dict[str, Any]:
        return await self._session.exec_info(self.id)

    async def running(self) -> bool:
        return (await self.info()).get("state") == "running"

    async def result(self) -> Optional[ExecResult]:
        """Its result once it ended (without output: see wait), else None."""
        j = await self.info()
        return _exec_result(j, self.id) if j.get("type") == "result" else None

    def stream(self, follow: bool = True) -> AsyncIterator[Event]:
        path = f"{self._session._path}/exec/{self.id}/output" + ("" if follow else "?follow=0")
        return self._session._client._stream("GET", path, None)

    async def output(self) -> Tuple[bytes, bytes]:
        """(stdout, stderr) it wrote that no call took yet; does not wait."""
        c = _Collector(self.id)
        async for ev in self.stream(follow=False):
            c.add(ev)
        return b"".join(c.out), b"".join(c.err)

    async def wait(self, timeout: Optional[float] = None) -> ExecResult:
        """Its result with the output not taken before; timeout (seconds):
        CordonError if it still runs by then (it runs on)."""
        if timeout is not None:
            end = time.monotonic() + timeout
            pause = 0.05
            while await self.running():
                if time.monotonic() >= end:
                    raise CordonError(f"exec {self.id} still runs after {timeout:g}s")
                await asyncio.sleep(min(pause, max(0.0, end - time.monotonic())))
                pause = min(pause * 2, 1.0)
        c = _Collector(self.id)
        async for ev in self.stream(follow=True):
            c.add(ev)
        return c.finish(f"exec {self.id}")

    async def signal(self, sig: str = "TERM") -> None:
        await self._session.signal(self.id, sig)

    async def kill(self) -> None:
        await self._session.signal(self.id, "KILL")


class Session:
    """One long-lived boundary of a server; an async context manager that
    always ends it (DELETE), its report kept in .report."""

    def __init__(self, client: "Client", session_id: str, warm: bool = False,
                 workspace: Optional[str] = None, cwd: Optional[str] = None):
        self._client = client
        self.id = session_id
        self.workspace = workspace
        self.cwd = cwd
        self.warm = warm
        self._path = _session_path(session_id)
        self.files = Files(self)
        self.report: Optional[Report] = None
        self._closed = False

    async def info(self) -> Dict[str, Any]:
        return await self._client._json("GET", self._path)

    async def changes(self, snapshot: Optional[str] = None) -> Dict[str, Any]:
        """The session's change set as it is now, with a diff, or a
        snapshot's (Session.changes)."""
        if snapshot is not None:
            return await self._client._json(
                "GET", f"{self._path}/snapshots/{urllib.parse.quote(snapshot, safe='')}/changes")
        return await self._client._json("GET", f"{self._path}/changes")

    async def pause(self) -> Dict[str, Any]:
        """Freeze every process of the session (Session.pause)."""
        return await self._client._json("POST", f"{self._path}/pause")

    async def resume(self) -> Dict[str, Any]:
        """Thaw it (Session.resume)."""
        return await self._client._json("POST", f"{self._path}/resume")

    async def snapshot(self) -> Dict[str, Any]:
        """A snapshot of the workspace (Session.snapshot)."""
        return await self._client._json("POST", f"{self._path}/snapshots")

    async def snapshots(self) -> Dict[str, Any]:
        """Its snapshots (Session.snapshots)."""
        return await self._client._json("GET", f"{self._path}/snapshots")

    async def delete_snapshot(self, snapshot: str) -> Dict[str, Any]:
        """Remove one (Session.delete_snapshot)."""
        return await self._client._json("DELETE", f"{self._path}/snapshots/{urllib.parse.quote(snapshot, safe='')}")

    async def snapshot_changeset(self, snapshot: str) -> Dict[str, Any]:
        """The snapshot's changes as a change set to apply
        (Session.snapshot_changeset)."""
        return await self._client._json(
            "POST", f"{self._path}/snapshots/{urllib.parse.quote(snapshot, safe='')}/changeset")

    async def restore(self, snapshot: str) -> Dict[str, Any]:
        """The workspace back to snapshot (Session.restore)."""
        return await self._client._json("POST", f"{self._path}/restore", {"snapshot": snapshot})

    async def fork(self, snapshot: Optional[str] = None) -> "Session":
        """A new session from snapshot or now (Session.fork)."""
        j = await self._client._json("POST", f"{self._path}/fork", {"snapshot": snapshot} if snapshot else {})
        if not isinstance(j.get("id"), str):
            raise CordonError(f"the server returned no session id: {j!r}")
        return Session(self._client, j["id"], workspace=j.get("workspace"), cwd=j.get("cwd"))

    def exec_stream(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
                    stdin: Union[str, bytes, None] = None, timeout: Any = None) -> AsyncIterator[Event]:
        """The exec's events as they arrive: `async for ev in ...`."""
        body = json.dumps(_exec_body(argv, env, cwd, stdin, timeout)).encode()
        return self._client._stream("POST", f"{self._path}/exec", body)

    async def exec(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
                   stdin: Union[str, bytes, None] = None, timeout: Any = None,
                   background: bool = False) -> Union[ExecResult, ExecHandle]:
        """Run argv in the session and wait for its result (output collected);
        background=True: an ExecHandle at once."""
        if background:
            j = await self._client._json("POST", f"{self._path}/exec",
                                         _exec_body(argv, env, cwd, stdin, timeout, background=True))
            if not isinstance(j.get("exec"), str) or not j["exec"]:
                raise CordonError(f"the server started no background exec: {j!r}")
            return ExecHandle(self, j["exec"])
        c = _Collector()
        async for ev in self.exec_stream(argv, env=env, cwd=cwd, stdin=stdin, timeout=timeout):
            c.add(ev)
        return c.finish("exec")

    async def signal(self, exec_id: str, sig: str = "TERM") -> None:
        await self._client._json("POST", f"{self._path}/exec/{exec_id}/signal", {"signal": sig})

    async def exec_info(self, exec_id: str) -> Dict[str, Any]:
        return await self._client._json("GET", f"{self._path}/exec/{exec_id}")

    async def pty(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
                  timeout: Any = None, rows: Optional[int] = None, cols: Optional[int] = None) -> PtyConnection:
        """Run argv on a pty of its own: the connection is upgraded (HTTP
        101) and carries the terminal's bytes both ways."""
        data = _pty_body(argv, env, cwd, timeout, rows, cols)
        r, w = await self._client._open()
        try:
            w.write(_upgrade_head(self._path, self._client._auth(), len(data)) + data)
            await w.drain()
            status, headers = await self._client._head(r)
            if status != 101:
                n = int(headers.get("content-length", "0") or 0)
                try:
                    body = await self._client._wait(r.readexactly(n))
                except asyncio.IncompleteReadError as e:
                    body = e.partial
                raise _error(status, body)
            # What the server sent along with the 101 stays in r's buffer.
            return PtyConnection(self, r, w, _pty_exec_id(headers))
        except BaseException:
            w.close()
            raise

    async def close(self) -> Optional[Report]:
        """End the session (DELETE): its report, with every exec. Idempotent."""
        if not self._closed:
            self._closed = True
            self.report = Report.from_dict(await self._client._json("DELETE", self._path))
        return self.report

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class _SessionOpening:
    """Client.session()'s answer: awaited, the Session; or the session of an
    `async with` block, ended at its end."""

    def __init__(self, client: "Client", body: Dict[str, Any]):
        self._client = client
        self._body = body
        self._session: Optional[Session] = None

    def __await__(self) -> Generator[Any, None, Session]:
        return self._client._open_session(self._body).__await__()

    async def __aenter__(self) -> Session:
        self._session = await self._client._open_session(self._body)
        return self._session

    async def __aexit__(self, *exc: Any) -> None:
        if self._session is not None:
            await self._session.close()


class Client:
    """A `cordon serve`, from asyncio: on a Unix socket (`Client(path)`), or
    on TCP with a bearer token (`Client(url="http://127.0.0.1:PORT",
    token=...)`). timeout: seconds for each connect and each read."""

    def __init__(self, socket_path: Optional[str] = None, timeout: Optional[float] = None, *,
                 url: Optional[str] = None, token: Optional[str] = None,
                 retry: Optional[Retry] = Retry()):
        if (socket_path is None) == (url is None):
            raise ValueError("give a socket path or a url, not both")
        self.socket_path = str(socket_path) if socket_path is not None else None
        self.timeout = timeout
        self.token = token
        self.retry = retry
        self.url = url
        self._host: Optional[Tuple[str, int]] = None
        if url is not None:
            u = urllib.parse.urlsplit(url)
            if u.scheme != "http" or not u.hostname or not u.port:
                raise ValueError(f"url: http://HOST:PORT expected, not {url!r}")
            self._host = (u.hostname, u.port)

    # ---- the connection ----

    def _where(self) -> str:
        return f"cordon serve at {self.url}" if self._host else f"cordon serve at socket {self.socket_path}"

    def _unreachable(self, e: BaseException) -> CordonError:
        return ServerUnreachable(f"{self._where()}: {type(e).__name__}: {e}")

    async def _wait(self, aw: Any) -> Any:
        if self.timeout is None:
            return await aw
        try:
            return await asyncio.wait_for(aw, self.timeout)
        except asyncio.TimeoutError as e:
            raise self._unreachable(TimeoutError(f"no answer in {self.timeout:g}s")) from e

    async def _open(self) -> Tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            if self._host:
                return await self._wait(asyncio.open_connection(self._host[0], self._host[1]))
            return await self._wait(asyncio.open_unix_connection(self.socket_path))
        except OSError as e:
            raise self._unreachable(e) from e

    async def _head(self, r: asyncio.StreamReader) -> Tuple[int, Dict[str, str]]:
        try:
            head = await self._wait(r.readuntil(b"\r\n\r\n"))
        except asyncio.IncompleteReadError as e:
            raise self._unreachable(ConnectionError("the server closed the connection before its answer")) from e
        except asyncio.LimitOverrunError as e:
            raise CordonError("the server's answer has no end of headers") from e
        except OSError as e:
            raise self._unreachable(e) from e
        if len(head) > _HEAD_MAX:
            raise CordonError("the server's answer has too long a head")
        return _parse_head(head[:-4])

    def _auth(self) -> Dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def _request(self, method: str, path: str, body: Optional[bytes],
                       headers: Dict[str, str]) -> _Response:
        r, w = await self._open()
        try:
            hs = {"Host": "localhost", "Connection": "close", **headers, **self._auth()}
            if body is not None or method in ("POST", "PUT"):
                hs["Content-Length"] = str(len(body or b""))
            head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hs.items()) + "\r\n"
            w.write(head.encode("latin-1") + (body or b""))
            await self._wait(w.drain())
            status, rh = await self._head(r)
            return _Response(self, r, w, status, rh)
        except OSError as e:
            w.close()
            raise self._unreachable(e) from e
        except BaseException:
            w.close()
            raise

    async def _respond(self, method: str, path: str, body: Optional[bytes],
                       headers: Dict[str, str]) -> _Response:
        """A response under 400; 429 and 503 retried per self.retry; a
        refusal raised as CordonError."""
        start = time.monotonic()
        attempt = 0
        while True:
            resp = await self._request(method, path, body, headers)
            if resp.status < 400:
                return resp
            try:
                data = await resp.read()
            finally:
                await resp.close()
            if resp.status in (429, 503) and self.retry:
                p = self.retry.pause(attempt, resp.headers.get("retry-after"))
                if time.monotonic() - start + p <= self.retry.deadline:
                    await asyncio.sleep(p)
                    attempt += 1
                    continue
            raise _error(resp.status, data)

    async def _stream(self, method: str, path: str, body: Optional[bytes]) -> AsyncIterator[Event]:
        """An NDJSON stream's events, until its result."""
        resp = await self._respond(method, path, body, {"Content-Type": "application/json"} if body else {})
        try:
            lines = _Lines()
            while True:
                chunk = await resp.read1()
                evs = lines.feed(chunk) if chunk else lines.end()
                for ev in evs:
                    yield ev
                    if ev.type == "result":
                        return
                if not chunk:
                    return
        finally:
            await resp.close()

    async def _call(self, method: str, path: str, body: Optional[bytes] = None,
                    headers: Optional[Dict[str, str]] = None) -> bytes:
        resp = await self._respond(method, path, body, headers or {})
        try:
            return await resp.read()
        finally:
            await resp.close()

    async def _json(self, method: str, path: str, obj: Any = None) -> Any:
        body = json.dumps(obj).encode() if obj is not None else None
        data = await self._call(method, path, body, {"Content-Type": "application/json"} if body else None)
        return json.loads(data) if data.strip() else {}

    # ---- the API ----

    async def _open_session(self, body: Dict[str, Any]) -> Session:
        j = await self._json("POST", "/v1/sessions", body)
        if not isinstance(j.get("id"), str):
            raise CordonError(f"the server returned no session id: {j!r}")
        return Session(self, j["id"], warm=j.get("warm") is True, workspace=j.get("workspace"), cwd=j.get("cwd"))

    def session(self, policy: Optional[Dict[str, Any]] = None, idle_timeout: Any = None,
                timeout: Any = None) -> _SessionOpening:
        """A new session (POST /v1/sessions): `async with client.session()
        as s:` (ended at the block's end) or `s = await client.session()`."""
        return _SessionOpening(self, _session_body(policy, idle_timeout, timeout))

    async def sessions(self) -> List[Dict[str, Any]]:
        return (await self._json("GET", "/v1/sessions")).get("sessions", [])

    async def session_report(self, session_id: str) -> Report:
        return Report.from_dict(await self._json("GET", f"{_session_path(session_id)}/report"))

    async def pool(self) -> Dict[str, Any]:
        return await self._json("GET", "/v1/pool")

    async def version(self) -> Dict[str, Any]:
        """GET /v1/version: {"version": the program's, "api": 1}."""
        return await self._json("GET", "/v1/version")

    async def health(self) -> bool:
        """Is the server ready (GET /v1/health, no token)? False when it
        answers 503 (shutting down)."""
        resp = await self._request("GET", "/v1/health", None, {})
        try:
            await resp.read()
            return resp.status == 200
        finally:
            await resp.close()

    async def metrics(self) -> str:
        return (await self._call("GET", "/v1/metrics")).decode()

    async def run(self, argv: Sequence[str], policy: Any = None, stdin: Union[str, bytes, None] = None,
                  timeout: Any = None) -> Report:
        """A one-shot run (POST /v1/runs): its report."""
        return _run_report(await self._json("POST", "/v1/runs", _run_body(argv, policy, stdin, timeout)))

    async def get_run(self, run_id: str) -> Report:
        return _run_report(await self._json("GET", f"/v1/runs/{urllib.parse.quote(run_id, safe='')}"))
