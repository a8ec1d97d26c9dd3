"""The client against a real `cordon serve` (skipped while the binary has
no serve verb)."""
import os
import subprocess
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


def test_pty_echo(serve):
    with cordon.Client(serve).session() as s:
        with s.pty(["/bin/cat"]) as t:
            t.settimeout(60)  # a hang guard: input typed at once is not lost
            t.sendall(b"ping\n")
            got = b""
            while got.count(b"ping") < 2:
                d = t.recv()
                if not d:
                    break
                got += d
            assert got.count(b"ping") == 2


def test_one_shot_run(serve):
    r = cordon.run(["/bin/echo", "hi"], server=serve)
    assert r.ok
