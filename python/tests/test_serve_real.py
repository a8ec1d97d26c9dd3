"""The client against a real `cordon serve` (skipped while the binary has
no serve verb)."""
import base64
import os
import subprocess
import threading
import time

import pytest

import cordon
from conftest import cordon_bin, has_serve

pytestmark = pytest.mark.skipif(not has_serve(cordon_bin()),
                                reason="this cordon has no `serve` verb yet (issue 18, branch serve)")


@pytest.fixture
def serve(tmp_path, workspace):
    sock = str(tmp_path / "serve.sock")
    p = subprocess.Popen([cordon_bin(), "serve", "--socket", sock,
                          "--state-dir", str(tmp_path / "state")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    for _ in range(600):  # a hang guard, not a measurement
        if os.path.exists(sock) or p.poll() is not None:
            break
        time.sleep(0.05)
    if not os.path.exists(sock):
        p.kill()
        pytest.fail(f"cordon serve did not start: {p.communicate()[1].decode(errors='replace')}")
    yield sock
    p.terminate()
    p.wait(timeout=60)


def test_session_state_across_execs(serve):
    with cordon.Client(serve).session() as s:
        assert s.exec(["/bin/sh", "-c", "echo 42 > state.txt"]).ok
        r = s.exec(["/bin/cat", "state.txt"])
        assert r.ok and r.stdout == b"42\n"
        assert s.files.read("state.txt") == b"42\n"
    assert s.report.status


def test_files_in_and_out(serve):
    with cordon.Client(serve).session() as s:
        s.files.write("in.txt", b"data")
        r = s.exec(["/bin/sh", "-c", "tr a-z A-Z < in.txt > out.txt"])
        assert r.ok, r.raw
        assert s.files.read("out.txt") == b"DATA"



def test_files_with_a_name_not_utf8(serve):
    with cordon.Client(serve).session() as s:
        assert s.exec(["/bin/sh", "-c", "printf hidden > \"$(printf 'bad\\377name')\""]).ok
        [e] = [e for e in s.files.list(".") if e.raw.startswith(b"bad")]
        assert e.name == "bad\ufffdname" and e.raw == b"bad\xffname"
        assert s.files.read(e.raw) == b"hidden"
        s.files.delete(e.raw)
        assert not [e for e in s.files.list(".") if e.raw.startswith(b"bad")]


def _ping_echoed(t):
    """cat on the pty: "ping" typed at once comes back twice (the echo and
    cat's output); input typed before the exec is ready is not lost."""
    t.settimeout(60)  # a hang guard
    t.sendall(b"ping\n")
    got = b""
    while got.count(b"ping") < 2:
        d = t.recv()
        if not d:
            break
        got += d
    assert got.count(b"ping") == 2


def test_pty_echo(serve):
    with cordon.Client(serve).session() as s:
        with s.pty(["/bin/cat"]) as t:
            _ping_echoed(t)


def test_one_shot_run(serve):
    r = cordon.run(["/bin/echo", "hi"], server=serve)
    assert r.ok


def _start(args, ready):
    p = subprocess.Popen([cordon_bin(), "serve"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(600):  # a hang guard, not a measurement
        if ready() or p.poll() is not None:
            break
        time.sleep(0.05)
    if not ready():
        p.kill()
        pytest.fail(f"cordon serve did not start: {p.communicate()[1].decode(errors='replace')}")
    return p


def test_warm_session_and_pool(tmp_path, workspace):
    sock = str(tmp_path / "w.sock")
    p = _start(["--socket", sock, "--state-dir", str(tmp_path / "state"), "--warm", "1"],
               lambda: os.path.exists(sock))
    try:
        c = cordon.Client(sock)
        for _ in range(600):  # until the pool is full
            if c.pool()["ready"] == 1:
                break
            time.sleep(0.05)
        with c.session() as s:
            assert s.warm
            assert s.exec(["/bin/true"]).ok
        assert s.report.session.warm is True and s.report.session.pool_seconds >= 0
        with c.session(policy={"limits": {"pids": 100}}) as s2:
            assert not s2.warm
        assert c.pool()["hits"] == 1
        for _ in range(600):  # until the pool is full again
            if c.pool()["ready"] == 1:
                break
            time.sleep(0.05)
        # A one-shot run with the pool's policy: from the pool too, the
        # command's outcome in the report.
        r = c.run(["sh", "-c", "echo hi; exit 3"])
        assert r.session.warm is True and len(r.execs) == 1
        assert (r.status, r.exit_code) == ("exit-nonzero", 3)
        assert base64.b64decode(r.run.stdout_b64) == b"hi\n"
        assert c.pool()["hits"] == 2
    finally:
        p.terminate()
        p.wait(timeout=60)


def test_tcp_with_a_token(tmp_path, workspace):
    import socket as so
    with so.socket() as t:
        t.bind(("127.0.0.1", 0))
        port = t.getsockname()[1]
    tok = tmp_path / "token"
    tok.write_text("tok-0123456789abcdef-python\n")
    tok.chmod(0o600)  # the server refuses a token others could read
    # A root server admitting TCP clients needs a ceiling (docs/api.md).
    ceil = tmp_path / "ceiling.json"
    ceil.write_text('{"limits": {"wall_time": "1h"}}\n')
    def up():
        try:
            so.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    p = _start(["--listen", f"127.0.0.1:{port}", "--token-file", str(tok), "--ceiling", str(ceil),
                "--state-dir", str(tmp_path / "state")], up)
    try:
        with pytest.raises(cordon.CordonError):
            cordon.Client(url=f"http://127.0.0.1:{port}", token="wrong-token-0123456789").session()
        # health needs no token; metrics does
        assert cordon.Client(url=f"http://127.0.0.1:{port}", token="wrong-token-0123456789").health() is True
        with pytest.raises(cordon.CordonError):
            cordon.Client(url=f"http://127.0.0.1:{port}", token="wrong-token-0123456789").metrics()
        c = cordon.Client(url=f"http://127.0.0.1:{port}", token="tok-0123456789abcdef-python")
        with c.session() as s:
            r = s.exec(["/bin/sh", "-c", "echo hi"])
            assert r.ok and r.stdout == b"hi\n"
            with s.pty(["/bin/cat"]) as t:
                _ping_echoed(t)
        assert "\ncordon_serve_sessions_created_total 1\n" in c.metrics()
    finally:
        p.terminate()
        p.wait(timeout=60)


# Issue 28 items 3 to 7: output never lost, the same result through both
# paths, reports kept after a timeout, sessions listed, directories removed.

def test_big_output_arrives_whole(serve):
    """Item 3: 24 MB of output, read by a client that starts late (its
    first read waits 2 s: the exec writes meanwhile), arrives whole: the
    worker stops reading the exec's output while the client's queue is
    full (flow control) instead of dropping it."""
    import hashlib
    with cordon.Client(serve).session() as s:
        src = os.urandom(24_000_000)
        s.files.write("src.bin", src)
        out, result = [], None
        for ev in s.exec_stream(["/bin/cat", "src.bin"]):
            if ev.type == "started":
                time.sleep(2)  # a slow reader, not a measurement
            elif ev.type == "stdout":
                out.append(ev.data)
            elif ev.type == "result":
                result = ev.raw
        got = b"".join(out)
        assert result["status"] == "ok" and result["dropped_bytes"] == 0, result
        assert len(got) == len(src)
        assert hashlib.sha256(got).hexdigest() == hashlib.sha256(src).hexdigest() == result["stdout"]["sha256"]
        r = s.exec(["/bin/cat", "src.bin"])
        assert r.ok and r.stdout == src


def test_run_output_through_server_as_through_cli(serve):
    """Item 4: cordon.run(server=) and Client.run() give the output in
    stdout_data and stderr_data, as cordon.run through the CLI does."""
    argv = ["/bin/sh", "-c", "echo out; echo err >&2"]
    r = cordon.run(argv, server=serve)
    assert (r.stdout_data, r.stderr_data) == (b"out\n", b"err\n")
    r2 = cordon.Client(serve).run(argv)
    assert (r2.stdout_data, r2.stderr_data) == (b"out\n", b"err\n")
    assert cordon.Client(serve).get_run(r2.run.id).stdout_data == b"out\n"
    r3 = cordon.run(argv, cordon_bin=cordon_bin())
    assert (r3.stdout_data, r3.stderr_data) == (b"out\n", b"err\n")


def _until(cond, what):
    for _ in range(1200):  # a hang guard, not a measurement
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    pytest.fail(f"never: {what}")


def _state(c, sid):
    return next((x["state"] for x in c.sessions() if x["id"] == sid), None)


def test_report_after_idle_timeout(serve):
    """Item 5: a session that ended by its idle timeout keeps its report:
    GET .../report gives it, an exec gets 410, and the with block ends
    with it (DELETE answers with the kept report)."""
    c = cordon.Client(serve)
    with c.session(idle_timeout="1s") as s:
        assert s.exec(["/bin/sh", "-c", "echo hi"]).ok
        # Listing does not renew the lease (a call to the session does).
        _until(lambda: _state(c, s.id) == "ended", "the session ended")
        assert s.info()["state"] == "ended"
        rep = c.session_report(s.id)
        assert rep.session.end == "idle-timeout" and len(rep.execs) == 1
        with pytest.raises(cordon.CordonError) as ei:
            s.exec(["/bin/true"])
        assert ei.value.status == 410
    assert s.report.session.id == s.id and s.report.session.end == "idle-timeout"
    # A running session has no report yet: 409.
    with c.session() as s2:
        with pytest.raises(cordon.CordonError) as ei:
            c.session_report(s2.id)
        assert ei.value.status == 409
    assert s2.report.session.end == "deleted"


def test_lease_ends_a_session_whose_client_left(serve):
    """Item 6: an exec left running by a client that went away does not
    keep its session: with no call for its idle timeout, it ends (the
    lease), and its report is kept."""
    c = cordon.Client(serve)
    s = c.session(idle_timeout="1s")
    stream = s.exec_stream(["/bin/sleep", "3600"])
    assert next(stream).type == "started"
    stream.close()  # the client goes away mid-stream
    _until(lambda: _state(c, s.id) == "ended", "the lease ran out")
    assert [x for x in c.sessions() if x["id"] == s.id] == [{"id": s.id, "state": "ended"}]
    rep = s.close()
    assert rep.session.end == "idle-timeout" and rep.execs[0].status == "session-ended"


# Issue 28, friction: the session's workspace and cwd; relative paths are
# the cwd's for files and exec alike; files.write makes parents.
def test_session_cwd_relative_paths_and_parents(serve):
    with cordon.Client(serve).session(policy={"cwd": "/tmp"}) as s:
        assert s.cwd == "/tmp"
        assert s.workspace and s.workspace.endswith(f"/sessions/{s.id}/work")
        s.files.write("deep/er/f.txt", "x")
        assert s.exec(["cat", "deep/er/f.txt"]).stdout == b"x"
        assert s.exec(["pwd"], cwd="deep").stdout == b"/tmp/deep\n"
        with pytest.raises(cordon.CordonError) as e:
            s.files.write("none/f.txt", "x", parents=False)
        assert e.value.status == 404


# Issue 28, friction: a background exec runs on beside other execs; its
# output and result come later.
def test_background_exec(serve):
    with cordon.Client(serve).session() as s:
        h = s.exec(["sh", "-c", "echo $$ > /tmp/bg.pid; echo up; trap 'echo bye; exit 0' TERM; "
                    "while :; do sleep 0.05; done"], background=True)
        assert isinstance(h, cordon.ExecHandle) and h.id.startswith("e-")
        for _ in range(600):  # a hang guard: until its pid file is written
            r = s.exec(["sh", "-c", "test -s /tmp/bg.pid && kill -0 $(cat /tmp/bg.pid) && echo alive"])
            if r.stdout == b"alive\n":
                break
            time.sleep(0.05)
        assert r.stdout == b"alive\n"
        assert h.running and h.result() is None
        h.signal("TERM")
        res = h.wait(timeout=60)
        assert res.status == "killed" and res.stdout == b"up\nbye\n", res.raw
        assert h.result().status == "killed"
    assert [e.status for e in s.report.execs][0] == "killed"


# Issue 28, friction: a 429 (runs past --max-runs) is retried with backoff
# (Retry-After honoured); off with retry=None; bounded by the deadline.
def test_runs_past_the_limit_retried(tmp_path, workspace):
    sock = str(tmp_path / "serve.sock")
    state = tmp_path / "state"
    gdir = tmp_path / "g"
    gdir.mkdir()
    gate = gdir / "gate"
    p = subprocess.Popen([cordon_bin(), "serve", "--socket", sock, "--state-dir", str(state), "--max-runs", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # a hang guard, not a measurement
            if os.path.exists(sock) or p.poll() is not None:
                break
            time.sleep(0.05)
        os.mkfifo(gate)
        first = {}
        t = threading.Thread(target=lambda: first.setdefault(
            "r", cordon.Client(sock).run(["cat", str(gate)], policy={"filesystem": {"read": [str(gdir)]}})),
            daemon=True)
        t.start()
        for _ in range(600):  # a hang guard: until the first run holds the slot
            if list(state.glob("runs/r-*/work")):
                break
            time.sleep(0.05)
        with pytest.raises(cordon.CordonError) as e:
            cordon.Client(sock, retry=None).run(["true"])
        assert e.value.status == 429
        with pytest.raises(cordon.CordonError) as e:
            cordon.Client(sock, retry=cordon.Retry(deadline=1.5, initial=0.1)).run(["true"])
        assert e.value.status == 429

        pauses = []

        class Opening(cordon.Retry):
            def pause(self, attempt, retry_after):
                pauses.append(retry_after)
                if attempt == 0:  # the first refusal: let the first run end
                    threading.Thread(target=lambda: gate.write_text("go\n")).start()
                return super().pause(attempt, retry_after)

        r = cordon.run(["echo", "second"], server=sock, retry=Opening(deadline=120))
        assert r.ok and r.stdout_data == b"second\n"
        assert pauses and pauses[0] == "1"
        t.join(60)
        assert first["r"].stdout_data == b"go\n"
    finally:
        try:  # a first run still waiting on its gate ends
            fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"end\n")
            os.close(fd)
        except OSError:
            pass
        p.terminate()
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


# Issue 32 item 4: TLS on --listen (--tls-cert, --tls-key); the client's
# https:// with a CA file; the token never on the wire in clear.

def _free_port():
    import socket as so
    with so.socket() as t:
        t.bind(("127.0.0.1", 0))
        return t.getsockname()[1]


def _self_signed(d, name):
    """A certificate for 127.0.0.1 made here (openssl req), and its key."""
    import shutil
    if not shutil.which("openssl"):
        pytest.skip("no openssl command to make a certificate")
    cert, key = d / f"{name}.crt", d / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={name}",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    key.chmod(0o600)
    return cert, key


class _Relay:
    """A TCP relay on loopback that keeps every byte it passes, both ways."""

    def __init__(self, port):
        import socket as so
        self.seen = bytearray()
        self._lock = threading.Lock()
        self._l = so.socket()
        self._l.bind(("127.0.0.1", 0))
        self._l.listen(16)
        self.port = self._l.getsockname()[1]
        self._to = port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import socket as so
        while True:
            try:
                a, _ = self._l.accept()
            except OSError:
                return
            b = so.create_connection(("127.0.0.1", self._to))
            for x, y in ((a, b), (b, a)):
                threading.Thread(target=self._pipe, args=(x, y), daemon=True).start()

    def _pipe(self, x, y):
        import socket as so
        try:
            while True:
                d = x.recv(65536)
                if not d:
                    break
                with self._lock:
                    self.seen += d
                y.sendall(d)
        except OSError:
            pass
        for s, how in ((y, so.SHUT_WR), (x, so.SHUT_RD)):
            try:
                s.shutdown(how)
            except OSError:
                pass

    def close(self):
        self._l.close()


def test_tls_listen(tmp_path, workspace):
    import socket as so
    cert, key = _self_signed(tmp_path, "server")
    other, _ = _self_signed(tmp_path, "other")
    port = _free_port()
    token = "tok-tls-0123456789abcdef-secret"
    tok = tmp_path / "token"
    tok.write_text(token + "\n")
    tok.chmod(0o600)
    ceil = tmp_path / "ceiling.json"
    ceil.write_text('{"limits": {"wall_time": "1h"}}\n')

    def up():
        try:
            so.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    p = _start(["--listen", f"127.0.0.1:{port}", "--token-file", str(tok), "--ceiling", str(ceil),
                "--tls-cert", str(cert), "--tls-key", str(key), "--header-timeout", "1s",
                "--state-dir", str(tmp_path / "state")], up)
    relay = _Relay(port)
    try:
        c = cordon.Client(url=f"https://127.0.0.1:{relay.port}", token=token, ca=str(cert))
        assert c.health() is True
        with c.session() as s:
            r = s.exec(["/bin/sh", "-c", "echo over-tls"])
            assert r.ok and r.stdout == b"over-tls\n"
            with s.pty(["/bin/cat"]) as t:
                _ping_echoed(t)
        assert "\ncordon_serve_sessions_created_total 1\n" in c.metrics()
        # What crossed the relay: TLS records, no token, no HTTP.
        seen = bytes(relay.seen)
        assert len(seen) > 1000 and token.encode() not in seen and b"Bearer" not in seen and b"HTTP/1.1" not in seen
        # A certificate of another CA: refused before any request is sent.
        with pytest.raises(cordon.ServerUnreachable):
            cordon.Client(url=f"https://127.0.0.1:{port}", token=token, ca=str(other)).health()
        # A plain-HTTP client gets no HTTP answer.
        with so.create_connection(("127.0.0.1", port), timeout=60) as t:
            t.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            try:
                while True:
                    d = t.recv(4096)
                    if not d:
                        break
                    got += d
            except OSError:
                pass
            assert b"HTTP/1." not in got and b"ready" not in got
        # A connection that never starts its handshake is closed at the
        # header deadline (--header-timeout 1s; 60 s is a hang guard).
        with so.create_connection(("127.0.0.1", port), timeout=60) as t:
            assert t.recv(1) == b""
        # TLS 1.2 is not offered (TLS 1.3 only: no renegotiation).
        import ssl
        ctx = ssl.create_default_context(cafile=str(cert))
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        with pytest.raises(ssl.SSLError):
            with so.create_connection(("127.0.0.1", port), timeout=60) as t:
                ctx.wrap_socket(t, server_hostname="127.0.0.1").close()
    finally:
        relay.close()
        p.terminate()
        p.wait(timeout=60)


def test_tcp_in_clear_only_on_loopback(tmp_path, workspace):
    """A listener beyond loopback without TLS is refused before it binds
    (--insecure-tcp says a mesh protects it); the client refuses to send a
    token over http:// to an address that is not loopback."""
    tok = tmp_path / "token"
    tok.write_text("tok-0123456789abcdef-python\n")
    tok.chmod(0o600)
    ceil = tmp_path / "ceiling.json"
    ceil.write_text('{"limits": {"wall_time": "1h"}}\n')
    base = [cordon_bin(), "serve", "--token-file", str(tok), "--ceiling", str(ceil),
            "--state-dir", str(tmp_path / "state")]
    r = subprocess.run(base + ["--listen", "0.0.0.0:1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    assert r.returncode == 2 and b"--tls-cert" in r.stderr and b"--insecure-tcp" in r.stderr, r.stderr
    cert, key = _self_signed(tmp_path, "server")
    r = subprocess.run(base + ["--socket", str(tmp_path / "s.sock"), "--tls-cert", str(cert), "--tls-key", str(key)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 2 and b"for --listen" in r.stderr, r.stderr
    key.chmod(0o644)
    r = subprocess.run(base + ["--listen", "127.0.0.1:1", "--tls-cert", str(cert), "--tls-key", str(key)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 2 and b"chmod 600" in r.stderr, r.stderr
    with pytest.raises(ValueError):
        cordon.Client(url="http://10.1.2.3:8080", token="t" * 20)
    cordon.Client(url="http://10.1.2.3:8080", token="t" * 20, insecure=True)  # no connection made
    cordon.Client(url="http://127.0.0.1:8080", token="t" * 20)


# Issue 32 item 4: a client over several servers (cordon.Pool): sessions
# placed on the least-loaded, each keeping its server.

def test_pool_spreads_sessions_over_two_servers(tmp_path, workspace):
    socks = [str(tmp_path / "a.sock"), str(tmp_path / "b.sock")]
    procs = [_start(["--socket", socks[0], "--state-dir", str(tmp_path / "sa"), "--max-sessions", "3"],
                    lambda: os.path.exists(socks[0])),
             _start(["--socket", socks[1], "--state-dir", str(tmp_path / "sb")],
                    lambda: os.path.exists(socks[1]))]
    try:
        pool = cordon.Pool(socks)
        held = [pool.session() for _ in range(4)]
        # Least-loaded: two on each; every session on the server it names.
        assert sorted(s.server for s in held) == sorted(socks * 2)
        assert pool.load() == {socks[0]: 2, socks[1]: 2}
        for s in held:
            assert s.exec(["/bin/sh", "-c", "echo $0 > where"], env=None).ok
            assert s.files.read("where") == b"/bin/sh\n"
            assert s.id in [x["id"] for x in cordon.Client(s.server).sessions()]
        # Server a takes one more (--max-sessions 3), then refuses (429):
        # the last goes to b, though a has fewer.
        extra = [pool.session() for _ in range(4)]
        assert sorted(s.server for s in extra) == sorted([socks[0]] + [socks[1]] * 3)
        assert extra[3].server == socks[1]
        # A handle reaches its session again, on its server (as another
        # process of the harness would: a pool of its own).
        other = cordon.Pool(list(reversed(socks)))
        again = other.attach(held[0].handle)
        assert again.server == held[0].server and again.files.read("where") == b"/bin/sh\n"
        assert other.load() == {held[0].server: 1, next(x for x in socks if x != held[0].server): 0}
        for s in held + extra:
            s.close()
        assert pool.load() == {socks[0]: 0, socks[1]: 0}
        assert pool.run(["/bin/echo", "hi"]).stdout_data == b"hi\n"
        # A server gone: the pool places on the other one.
        procs[0].terminate()
        procs[0].wait(timeout=60)
        for _ in range(2):
            with pool.session() as s:
                assert s.server == socks[1] and s.exec(["/bin/true"]).ok
        procs[1].terminate()
        procs[1].wait(timeout=60)
        with pytest.raises(cordon.ServerUnreachable):
            pool.session()
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=60)


def _review_session(client):
    """A session in review mode, or a skip where this host cannot have one
    (as root: no idmapped mounts of the state directory's filesystem)."""
    try:
        return client.session(policy={"filesystem": {"workspace_mode": "review"}})
    except cordon.CordonError as e:
        if "idmapped" in str(e):
            pytest.skip(f"no review workspace here: {e}")
        raise


def test_session_changes(serve):
    s = _review_session(cordon.Client(serve))
    with s:
        assert s.exec(["/bin/sh", "-c", "echo hi > a.txt && ln -s /etc/shadow evil"]).ok
        c = s.changes()
        assert sorted((x["change"], x["path"], x["type"]) for x in c["changes"]) == \
            [("created", "a.txt", "file"), ("created", "evil", "other")]
        assert "+hi" in c["diff"].splitlines() and not c["diff_truncated"]
        assert c["session"] == s.id
    assert s.report.to_dict()["changes"]["state"] == "kept"


def test_session_pause_and_resume(serve):
    with cordon.Client(serve).session() as s:
        try:
            p = s.pause()
        except cordon.CordonError as e:
            if "no freezer" in str(e):
                pytest.skip(f"no freezer for a session here: {e}")
            raise
        # "frozen": whether every process was frozen within 2 s (not always
        # on a loaded machine's v1 freezer): the state is paused either way
        assert p["state"] == "paused" and isinstance(p["frozen"], bool)
        assert s.info()["state"] == "paused"
        with pytest.raises(cordon.CordonError) as e:
            s.exec(["true"])
        assert e.value.status == 409 and "paused" in str(e.value)
        assert s.resume()["state"] == "running"
        assert s.exec(["true"]).ok
    assert len(s.report.to_dict()["session"]["paused"]) == 1


def test_session_snapshot_restore_fork(serve):
    c = cordon.Client(serve)
    with c.session() as s:
        assert s.exec(["/bin/sh", "-c", "echo one > a"]).ok
        try:
            p = s.snapshot()
        except cordon.CordonError as e:
            if "workspace mode is direct" in str(e):
                pytest.skip(f"no overlay workspace for a session here: {e}")
            raise
        assert p["snapshot"].startswith("p-") and p["files"] == 1 and p["bytes"] == 4
        assert [x["snapshot"] for x in s.snapshots()["snapshots"]] == [p["snapshot"]]
        assert s.exec(["/bin/sh", "-c", "echo two > a; echo b > b"]).ok
        ch = s.changes(snapshot=p["snapshot"])
        assert ch["snapshot"] == p["snapshot"] and [x["path"] for x in ch["changes"]] == ["a"]
        assert [x["path"] for x in s.changes()["changes"]] == ["a", "b"]
        cs = s.snapshot_changeset(p["snapshot"])
        assert cs["snapshot"] == p["snapshot"] and cs["files"] == 1 and cs["bytes"] == 4
        assert cs["dir"].startswith("/") and "/.cordon-changes" in cs["dir"]
        bg = s.exec(["sleep", "100"], background=True)
        assert s.restore(p["snapshot"]) == {"restored": p["snapshot"]}
        assert bg.wait().status == "restored"
        assert s.files.read("a") == b"one\n"
        with s.fork(p["snapshot"]) as f:
            assert f.id != s.id and f.files.read("a") == b"one\n"
            assert f.exec(["/bin/sh", "-c", "echo fork > a"]).ok
            assert s.files.read("a") == b"one\n"
        with s.fork() as f2:
            assert f2.files.read("a") == b"one\n"
        assert s.delete_snapshot(p["snapshot"]) == {"deleted": p["snapshot"]}
        assert s.snapshots()["snapshots"] == []
