"""cordon.aio.Client against a real `cordon serve`: the sync client's
surface as coroutines (asyncio.run in each test; no pytest plugin)."""
import asyncio
import socket

import pytest

import cordon
import cordon.aio
from conftest import cordon_bin, has_serve
from test_serve_real import _start, serve  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(not has_serve(cordon_bin()), reason="this cordon has no `serve` verb")


def test_aio_session_state_and_files(serve):
    async def main():
        async with cordon.aio.Client(serve).session() as s:
            assert (await s.exec(["/bin/sh", "-c", "echo 42 > state.txt"])).ok
            r = await s.exec(["/bin/cat", "state.txt"])
            assert r.ok and r.stdout == b"42\n"
            await s.files.write("in.txt", b"data")
            r = await s.exec(["/bin/sh", "-c", "tr a-z A-Z < in.txt > out.txt"])
            assert r.ok, r.raw
            assert await s.files.read("out.txt") == b"DATA"
            assert {"in.txt", "out.txt", "state.txt"} <= {e.name for e in await s.files.list(".")}
            await s.files.delete("in.txt")
            assert "in.txt" not in {e.name for e in await s.files.list(".")}
            r = await s.exec(["/bin/cat"], stdin=b"\x00\xffbin")
            assert r.stdout == b"\x00\xffbin"
            with pytest.raises(cordon.CordonError) as e:
                await s.files.read("no-such-file")
            assert e.value.status == 404
        return s
    s = asyncio.run(main())
    assert s.report is not None and len(s.report.execs) == 4


def test_aio_exec_stream_in_order(serve):
    async def main():
        async with cordon.aio.Client(serve).session() as s:
            return [ev async for ev in s.exec_stream(["/bin/sh", "-c", "echo out; echo err >&2; exit 3"])]
    evs = asyncio.run(main())
    types = [e.type for e in evs]
    assert types[0] == "started" and types[-1] == "result", types
    assert b"".join(e.data for e in evs if e.type == "stdout") == b"out\n"
    assert b"".join(e.data for e in evs if e.type == "stderr") == b"err\n"
    assert evs[-1].raw["exit_code"] == 3


def test_aio_big_output_whole(serve):
    # Many chunks of a chunked answer, every byte once and in order.
    async def main():
        async with cordon.aio.Client(serve).session() as s:
            return await s.exec(["/bin/sh", "-c", "seq 1 200000"])
    r = asyncio.run(main())
    assert r.ok and r.stdout == b"".join(b"%d\n" % i for i in range(1, 200001))


def test_aio_signal_background_exec(serve):
    async def main():
        async with cordon.aio.Client(serve).session() as s:
            h = await s.exec(["sh", "-c", "echo up; trap 'echo bye; exit 0' TERM; while :; do sleep 0.05; done"],
                             background=True)
            assert isinstance(h, cordon.aio.ExecHandle)
            for _ in range(600):  # a hang guard: until the trap is set (its "up")
                out, _err = await h.output()
                if out:
                    break
                await asyncio.sleep(0.05)
            assert out == b"up\n" and await h.running()
            await h.signal("TERM")
            return await h.wait(timeout=60)
    res = asyncio.run(main())
    assert res.status == "killed" and res.stdout == b"bye\n", res.raw


def test_aio_pty_echo_and_resize(serve):
    async def main():
        async with cordon.aio.Client(serve).session() as s:
            async with await s.pty(["/bin/sh", "-c", "read x; read y; stty size; echo got-$x"],
                                   rows=24, cols=80) as t:
                assert t.exec_id
                await t.write(b"ping\n")
                got = b""
                resized = False
                while b"got-ping" not in got:
                    d = await asyncio.wait_for(t.read(), 60)  # a hang guard
                    if not d:
                        break
                    got += d
                    if b"ping" in got and not resized:
                        # the echo of the first line: the pty is there to be resized
                        await t.resize(30, 100)
                        await t.write(b"pong\n")
                        resized = True
                return got
    got = asyncio.run(main())
    assert b"30 100" in got and b"got-ping" in got, got


def test_aio_one_shot_run_and_concurrent_sessions(serve):
    async def one(c, i):
        async with c.session() as s:
            return (await s.exec(["/bin/sh", "-c", f"echo {i}"])).stdout

    async def main():
        c = cordon.aio.Client(serve)
        rep = await c.run(["/bin/echo", "hi"])
        outs = await asyncio.gather(*(one(c, i) for i in range(3)))
        again = await c.get_run(rep.to_dict()["run"]["id"])
        return rep, outs, again, await c.health(), await c.version()
    rep, outs, again, healthy, ver = asyncio.run(main())
    assert rep.status == "ok" and rep.stdout_data == b"hi\n"
    assert again.status == "ok"
    assert outs == [b"0\n", b"1\n", b"2\n"]
    assert healthy is True
    assert ver == {"version": cordon.__version__, "api": 1}
    assert cordon.Client(serve).version() == ver  # the sync client's too


def test_aio_unreachable_names_the_socket(tmp_path):
    async def main():
        await cordon.aio.Client(str(tmp_path / "none.sock")).sessions()
    with pytest.raises(cordon.ServerUnreachable) as e:
        asyncio.run(main())
    assert "none.sock" in str(e.value)


def test_aio_tcp_with_a_token(tmp_path, workspace):
    with socket.socket() as t:
        t.bind(("127.0.0.1", 0))
        port = t.getsockname()[1]
    tok = tmp_path / "token"
    tok.write_text("tok-0123456789abcdef-aio\n")
    tok.chmod(0o600)
    ceil = tmp_path / "ceiling.json"
    ceil.write_text('{"limits": {"wall_time": "1h"}}\n')

    def up():
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            return False
    p = _start(["--listen", f"127.0.0.1:{port}", "--token-file", str(tok), "--ceiling", str(ceil),
                "--state-dir", str(tmp_path / "state")], up)
    url = f"http://127.0.0.1:{port}"

    async def main():
        with pytest.raises(cordon.CordonError) as e:
            await cordon.aio.Client(url=url, token="wrong-token-0123456789").version()
        assert e.value.status == 401
        c = cordon.aio.Client(url=url, token="tok-0123456789abcdef-aio")
        async with c.session() as s:
            r = await s.exec(["/bin/sh", "-c", "echo hi"])
            assert r.ok and r.stdout == b"hi\n"
            async with await s.pty(["/bin/cat"]) as t:
                await t.write(b"ping\n")
                got = b""
                while got.count(b"ping") < 2:
                    d = await asyncio.wait_for(t.read(), 60)  # a hang guard
                    if not d:
                        break
                    got += d
                assert got.count(b"ping") == 2
    try:
        asyncio.run(main())
    finally:
        p.terminate()
        p.wait(timeout=60)


def test_aio_session_changes(serve):
    async def main():
        try:
            s = await cordon.aio.Client(serve).session(policy={"filesystem": {"workspace_mode": "review"}})
        except cordon.CordonError as e:
            if "idmapped" in str(e):
                pytest.skip(f"no review workspace here: {e}")
            raise
        async with s:
            assert (await s.exec(["/bin/sh", "-c", "echo hi > a.txt"])).ok
            c = await s.changes()
            assert [(x["change"], x["path"]) for x in c["changes"]] == [("created", "a.txt")]
            assert "+hi" in c["diff"].splitlines()
    asyncio.run(main())


def test_aio_session_pause_and_resume(serve):
    async def main():
        s = await cordon.aio.Client(serve).session()
        async with s:
            try:
                p = await s.pause()
            except cordon.CordonError as e:
                if "no freezer" in str(e):
                    pytest.skip(f"no freezer for a session here: {e}")
                raise
            assert p["state"] == "paused"
            assert (await s.resume())["state"] == "running"
            assert (await s.exec(["true"])).ok
    asyncio.run(main())


def test_aio_session_snapshot_restore_fork(serve):
    async def main():
        s = await cordon.aio.Client(serve).session()
        async with s:
            assert (await s.exec(["/bin/sh", "-c", "echo one > a"])).ok
            try:
                p = await s.snapshot()
            except cordon.CordonError as e:
                if "workspace mode is direct" in str(e):
                    pytest.skip(f"no overlay workspace for a session here: {e}")
                raise
            assert (await s.exec(["/bin/sh", "-c", "echo two > a; echo b > b"])).ok
            ch = await s.changes(snapshot=p["snapshot"])
            assert ch["snapshot"] == p["snapshot"] and [x["path"] for x in ch["changes"]] == ["a"]
            assert (await s.restore(p["snapshot"])) == {"restored": p["snapshot"]}
            assert (await s.files.read("a")) == b"one\n"
            f = await s.fork()
            async with f:
                assert (await f.files.read("a")) == b"one\n"
            assert len((await s.snapshots())["snapshots"]) == 1
            await s.delete_snapshot(p["snapshot"])
    asyncio.run(main())
