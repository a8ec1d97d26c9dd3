"""The serve API's requests and answers as data, with no I/O: what the sync
client (client.py) and the asyncio client (aio.py) both build and parse.
Pure: bodies in, dicts and dataclasses out."""
import base64
import binascii
import json
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Union

from .errors import CordonError
from .report import Report


def _dur(timeout: Any) -> Optional[str]:
    if timeout is None:
        return None
    if isinstance(timeout, (int, float)):
        return f"{timeout:g}s"
    return str(timeout)


def _error(status: int, body: bytes) -> CordonError:
    msg = body.decode(errors="replace").strip()
    try:
        j = json.loads(body)
        if isinstance(j, dict) and isinstance(j.get("error"), str):
            msg = j["error"]
    except ValueError:
        pass
    return CordonError(f"HTTP {status}: {msg}", status)


@dataclass
class Event:
    """One line of an exec's stream: type is "started", "stdout", "stderr" or
    "result" (or one this version does not know); data holds the decoded
    bytes of an output event."""
    type: str
    data: bytes = b""
    raw: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ExecResult:
    """The end of one exec in a session."""
    exec_id: Optional[str]
    status: Optional[str]
    exit_code: Optional[int]
    signal: Optional[str]
    denials: List[Dict[str, Any]]
    usage: Dict[str, Any]
    stdout: bytes = b""
    stderr: bytes = b""
    raw: Dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def text(self) -> str:
        """stdout as text (UTF-8, undecodable bytes replaced)."""
        return self.stdout.decode(errors="replace")


@dataclass
class FileEntry:
    name: str
    type: str
    size: Optional[int] = None
    mode: Optional[int] = None
    #: the name's bytes: for a name that is not UTF-8 (``name`` then shows
    #: U+FFFD), pass these as the path to reach it
    raw: Optional[bytes] = None


# The output events as the server writes them (lib/session.c, emit_data):
# decoded without the JSON parser (the stream's bulk); any other line is
# parsed as JSON.
_OUT_PREFIX = (b'{"type":"stdout","data_b64":"', b'{"type":"stderr","data_b64":"')


def _event(line: bytes) -> Optional[Event]:
    """One NDJSON line as an Event (None for a blank line)."""
    for i, pre in enumerate(_OUT_PREFIX):
        if line.startswith(pre) and line.endswith(b'"}'):
            b64 = line[len(pre):-2]
            t = "stderr" if i else "stdout"
            return Event(t, binascii.a2b_base64(b64), {"type": t, "data_b64": b64.decode("ascii")})
    line = line.strip()
    if not line:
        return None
    ev = json.loads(line)
    data = base64.b64decode(ev["data_b64"]) if "data_b64" in ev else b""
    return Event(ev.get("type", ""), data, ev)


class _Lines:
    """NDJSON split from pieces of any size: feed() gives the events of the
    lines a piece completed, end() the last line's."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> List[Event]:
        pending = self._pending + chunk if self._pending else chunk
        out: List[Event] = []
        start = 0
        while True:
            nl = pending.find(b"\n", start)
            if nl < 0:
                break
            ev = _event(pending[start:nl])
            start = nl + 1
            if ev is not None:
                out.append(ev)
        self._pending = pending[start:]
        return out

    def end(self) -> List[Event]:
        ev = _event(self._pending) if self._pending.strip() else None
        self._pending = b""
        return [ev] if ev is not None else []


def _exec_body(argv, env, cwd, stdin, timeout, pty=False, background=False) -> Dict[str, Any]:
    body: Dict[str, Any] = {"argv": [str(a) for a in argv]}
    if env is not None:
        body["env"] = dict(env)
    if cwd is not None:
        body["cwd"] = cwd
    if isinstance(stdin, str):
        body["stdin"] = stdin
    elif stdin is not None:
        body["stdin_b64"] = base64.b64encode(bytes(stdin)).decode()
    if timeout is not None:
        body["timeout"] = _dur(timeout)
    body["pty"] = pty
    if background:
        body["background"] = True
    return body


class _Collector:
    """An exec's stream gathered, event by event: its output and result."""

    def __init__(self, exec_id: Optional[str] = None) -> None:
        self.exec_id = exec_id
        self.out: List[bytes] = []
        self.err: List[bytes] = []
        self.result: Optional[Dict[str, Any]] = None

    def add(self, ev: Event) -> None:
        if ev.type == "started":
            self.exec_id = ev.raw.get("exec")
        elif ev.type == "stdout":
            self.out.append(ev.data)
        elif ev.type == "stderr":
            self.err.append(ev.data)
        elif ev.type == "result":
            self.result = ev.raw

    def finish(self, what: str) -> ExecResult:
        result = self.result
        if result is None:
            raise CordonError(f"{what}: the exec's stream ended without a result")
        if result.get("dropped_bytes"):
            # Never silently: the server drops output only for a client that
            # is gone, so this is not expected while we read.
            raise CordonError(f"exec {result.get('exec', self.exec_id)}: {result['dropped_bytes']} bytes of its "
                              f"output did not reach this client (its result: {result.get('status')})")
        return _exec_result(result, self.exec_id, b"".join(self.out), b"".join(self.err))


def _exec_result(j: Dict[str, Any], exec_id: Optional[str], out: bytes = b"", err: bytes = b"") -> ExecResult:
    return ExecResult(j.get("exec", exec_id), j.get("status"), j.get("exit_code"), j.get("signal"),
                      j.get("denials", []), j.get("usage", {}), out, err, j)


def _collect(events: Iterable[Event], what: str) -> ExecResult:
    c = _Collector()
    for ev in events:
        c.add(ev)
    return c.finish(what)


def _file_query(path: Union[str, bytes]) -> str:
    # bytes: a name that is not UTF-8, percent-encoded as it is
    return "?" + urllib.parse.urlencode({"path": path})


def _file_entries(j: Dict[str, Any]) -> List[FileEntry]:
    return [FileEntry(e.get("name"), e.get("type"), e.get("size"), e.get("mode"),
                      base64.b64decode(e["name_b64"]) if "name_b64" in e else
                      (e.get("name") or "").encode())
            for e in j.get("entries", [])]


def _session_path(session_id: str) -> str:
    return f"/v1/sessions/{urllib.parse.quote(session_id, safe='')}"


def _session_body(policy, idle_timeout, timeout) -> Dict[str, Any]:
    body: Dict[str, Any] = {}
    if policy is not None:
        body["policy"] = policy
    if idle_timeout is not None:
        body["idle_timeout"] = _dur(idle_timeout)
    if timeout is not None:
        body["timeout"] = _dur(timeout)
    return body


def _run_body(argv, policy, stdin, timeout) -> Dict[str, Any]:
    """POST /v1/runs's body; policy a dict or a file's path."""
    body: Dict[str, Any] = {"argv": [str(a) for a in argv]}
    if policy is not None:
        if not isinstance(policy, dict):
            with open(policy) as f:
                policy = json.load(f)
        body["policy"] = policy
    if timeout is not None:
        pol = dict(body.get("policy") or {})
        limits = dict(pol.get("limits") or {})
        limits["wall_time"] = _dur(timeout)
        pol["limits"] = limits
        body["policy"] = pol
    if isinstance(stdin, (bytes, bytearray)):
        try:
            body["stdin"] = bytes(stdin).decode()  # the API's field
        except UnicodeDecodeError:
            # POST /v1/runs takes text only; a session's exec takes bytes.
            raise ValueError("stdin: POST /v1/runs takes text (UTF-8) only; "
                             "use a session's exec for binary input") from None
    elif stdin is not None:
        body["stdin"] = stdin
    return body


def _run_report(j: Dict[str, Any]) -> Report:
    """A one-shot run's answer as cordon.run's result through the CLI: the
    report, its output in stdout_data and stderr_data (bytes, from the
    answer's "run" object)."""
    rep = Report.from_dict(j)
    run = j.get("run") if isinstance(j, dict) else None
    if isinstance(run, dict):
        rep.stdout_data = base64.b64decode(run.get("stdout_b64") or "")
        rep.stderr_data = base64.b64decode(run.get("stderr_b64") or "")
    return rep


def _pty_body(argv, env, cwd, timeout, rows, cols) -> bytes:
    body = _exec_body(argv, env, cwd, None, timeout, pty=True)
    if rows and cols:
        body["rows"], body["cols"] = rows, cols
    return json.dumps(body).encode()


def _upgrade_head(path: str, auth: Dict[str, str], length: int) -> bytes:
    """The head of a pty exec's request (HTTP Upgrade)."""
    a = "".join(f"{k}: {v}\r\n" for k, v in auth.items())
    return (f"POST {path}/exec HTTP/1.1\r\nHost: localhost\r\n{a}"
            f"Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def _parse_head(head: bytes):
    """(status, headers with lower-case names) of a response's head (without
    its blank line)."""
    lines = head.decode("iso-8859-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    headers: Dict[str, str] = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers


def _pty_exec_id(headers: Dict[str, str]) -> Optional[str]:
    return headers.get("cordon-exec") or headers.get("x-cordon-exec")
