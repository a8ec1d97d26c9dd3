"""cordon.Client against fakeserve (the API's shape, no cordon serve)."""
import json
import socket
import threading

import pytest

import cordon
import fakeserve


@pytest.fixture
def server(tmp_path):
    path = str(tmp_path / "api.sock")
    srv, state = fakeserve.start(path)
    yield path, state
    srv.shutdown()
    srv.server_close()


def test_session_exec_and_delete(server):
    path, state = server
    c = cordon.Client(path)
    with c.session(policy={"limits": {"wall_time": "5s"}}, idle_timeout=600, timeout="1h") as s:
        assert s.id.startswith("s-")
        assert s.info()["state"] == "running"
        r = s.exec(["echo", "hello", "world"], env={"A": "1"}, cwd="/tmp", timeout=30)
        assert r.ok and r.exit_code == 0 and r.stdout == b"hello world\n" and r.text == "hello world\n"
        assert r.exec_id.startswith("e-")
        r = s.exec(["fail"])
        assert r.status == "exit-nonzero" and r.exit_code == 3
        assert r.stdout == b"partial" and r.stderr == b"it failed\n"
    # The with block ended the session and kept its report.
    assert s.report.status == "ok" and s.report.session.id == s.id
    assert [e.exit_code for e in s.report.execs] == [0, 3]
    post = [json.loads(b) for m, p, b, h in state.requests if m == "POST" and p == "/v1/sessions"]
    assert post == [{"policy": {"limits": {"wall_time": "5s"}}, "idle_timeout": "600s", "timeout": "1h"}]
    ex = [json.loads(b) for m, p, b, h in state.requests if p.endswith("/exec")][0]
    assert ex == {"argv": ["echo", "hello", "world"], "env": {"A": "1"}, "cwd": "/tmp", "timeout": "30s",
                  "pty": False}
    assert [m for m, p, b, h in state.requests if p == f"/v1/sessions/{s.id}"][-1] == "DELETE"


def test_session_deleted_when_the_block_raises(server):
    path, state = server
    with pytest.raises(RuntimeError):
        with cordon.Client(path).session() as s:
            raise RuntimeError("the agent failed")
    assert ("DELETE", f"/v1/sessions/{s.id}") in [(m, p) for m, p, b, h in state.requests]
    assert s.id not in state.sessions


def test_stdin_text_and_bytes(server):
    path, state = server
    with cordon.Client(path).session() as s:
        assert s.exec(["cat"], stdin="text in").stdout == b"text in"
        assert s.exec(["cat"], stdin=b"\x00\xffbin").stdout == b"\x00\xffbin"
    bodies = [json.loads(b) for m, p, b, h in state.requests if p.endswith("/exec")]
    assert bodies[0]["stdin"] == "text in" and bodies[1]["stdin_b64"] == "AP9iaW4="


def test_exec_stream_events_in_order(server):
    path, _ = server
    with cordon.Client(path).session() as s:
        evs = list(s.exec_stream(["fail"]))
    assert [e.type for e in evs] == ["started", "stdout", "stderr", "result"]
    assert evs[1].data == b"partial" and evs[-1].raw["exit_code"] == 3


def test_signal_a_hung_exec(server):
    path, state = server
    with cordon.Client(path).session() as s:
        stream = s.exec_stream(["hang"])
        started = next(stream)
        assert started.type == "started"
        s.signal(started.raw["exec"], "TERM")
        rest = list(stream)
        assert rest[-1].raw["status"] == "signaled" and rest[-1].raw["signal"] == "SIGTERM"
        assert s.exec_info(started.raw["exec"])["signal_sent"] == "TERM"


def test_files(server):
    path, _ = server
    with cordon.Client(path).session() as s:
        s.files.write("dir/a b.txt", "héllo")
        s.files.write("bin", b"\x00\x01")
        assert s.files.read("dir/a b.txt") == "héllo".encode()
        assert [(e.name, e.type, e.size) for e in s.files.list(".")] == [("bin", "file", 2), ("dir/a b.txt", "file", 6)]
        s.files.delete("bin")
        with pytest.raises(cordon.CordonError) as ei:
            s.files.read("bin")
        assert ei.value.status == 404 and "bin: no such file" in str(ei.value)


def test_errors_carry_the_servers_message(server):
    path, _ = server
    with pytest.raises(cordon.CordonError) as ei:
        cordon.Client(path).session(policy={"limits": {"memory": "1T"}})
    assert ei.value.status == 403 and "exceeds the ceiling" in str(ei.value)


def test_pty_upgrade(server):
    path, state = server
    with cordon.Client(path).session() as s:
        with s.pty(["bash"], rows=30, cols=100) as t:
            t.settimeout(30)  # a hang guard
            assert t.exec_id.startswith("e-")
            assert t.recv(2) == b"$ "  # sent with the 101: not lost in a buffer
            t.sendall(b"echo hi\n")
            got = b""
            while b"ECHO HI\r\n" not in got:
                got += t.recv()
            assert got == b"echo hi\r\nECHO HI\r\n"
            t.resize(50, 132)
            t.shutdown()
            assert t.recv() == b""
            assert t.result()["size"] == {"rows": 50, "cols": 132}
    req = [(b, h) for m, p, b, h in state.requests if p.endswith("/exec")][0]
    assert json.loads(req[0])["pty"] is True and json.loads(req[0])["rows"] == 30
    assert req[1]["Upgrade"] == "tcp" and req[1]["Connection"] == "Upgrade"


def test_one_shot_run_through_a_server(server):
    path, state = server
    r = cordon.run(["echo", "one", "shot"], server=path)
    assert isinstance(r, cordon.Report) and r.ok and r.command == ["echo", "one", "shot"]
    again = cordon.Client(path).get_run(r.extra["id"])
    assert again.to_dict() == r.to_dict()
    cordon.Client(path).run(["cat"], stdin=b"text", policy={"env": {"A": "1"}}, timeout=5)
    # POST /v1/runs takes text only: binary input is refused before it is
    # sent (the server refuses stdin_b64 there), never dropped.
    with pytest.raises(ValueError):
        cordon.Client(path).run(["cat"], stdin=b"\xff")
    bodies = [json.loads(b) for m, p, b, h in state.requests if p == "/v1/runs"]
    assert bodies[1] == {"argv": ["cat"], "policy": {"env": {"A": "1"}, "limits": {"wall_time": "5s"}}, "stdin": "text"}
    assert len(bodies) == 2


def test_no_server():
    with pytest.raises(OSError):
        cordon.Client("/nonexistent/cordon.sock").session()


# Issue 28, friction: an unreachable server is a CordonError naming the
# socket path or the URL (and a ConnectionError).
def test_unreachable_server_named(tmp_path):
    sock = str(tmp_path / "no-such.sock")
    with pytest.raises(cordon.CordonError) as e:
        cordon.Client(sock).run(["true"])
    assert sock in str(e.value) and isinstance(e.value, ConnectionError)
    with pytest.raises(cordon.CordonError) as e:
        cordon.run(["true"], server=sock)
    assert sock in str(e.value)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(cordon.CordonError) as e:
        cordon.Client(url=f"http://127.0.0.1:{port}", token="t" * 16).session()
    assert f"http://127.0.0.1:{port}" in str(e.value)
