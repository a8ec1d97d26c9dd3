"""cordon.run through the CLI: each outcome comes back as a report."""
import pytest

import cordon


def test_ok(cordon_path, workspace):
    r = cordon.run(["/bin/sh", "-c", "echo out; echo err >&2"], cordon_bin=cordon_path)
    assert r.status == "ok" and r.ok and r.exit_code == 0
    assert r.stdout_data == b"out\n" and r.stderr_data == b"err\n"
    assert r.command == ["/bin/sh", "-c", "echo out; echo err >&2"]
    assert r.verdicts.containment == "clean"


def test_stdin_and_files(cordon_path, workspace):
    r = cordon.run(["/bin/sh", "-c", "cat > got.txt"], stdin="piped\n", cordon_bin=cordon_path)
    assert r.ok, r.reason
    assert (workspace / "got.txt").read_text() == "piped\n"
    assert [o.path for o in r.outputs] == ["got.txt"]


def test_exit_nonzero(cordon_path, workspace):
    r = cordon.run(["/bin/sh", "-c", "exit 7"], cordon_bin=cordon_path)
    assert r.status == "exit-nonzero" and r.exit_code == 7 and not r.ok
    assert r.exit_status == 7


def test_timeout(cordon_path, workspace):
    r = cordon.run(["/bin/sleep", "100"], timeout=0.5, cordon_bin=cordon_path)
    assert r.status == "timeout"
    assert "wall_time" in r.limits_hit


def test_denial(cordon_path, workspace):
    r = cordon.run(["/usr/bin/python3", "-c",
                    "import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(321, 0, 0, 0))"],
                   cordon_bin=cordon_path)  # bpf
    assert r.stdout_data.strip() == b"-1"
    assert [(d.kind, d.target) for d in r.denials] == [("syscall", "bpf")]
    assert r.verdicts.containment == "violations"


def test_policy_dict(cordon_path, workspace):
    (workspace / "data").mkdir()
    (workspace / "data" / "in.txt").write_text("x")
    pol = {"filesystem": {"write": ["./data"]}, "limits": {"output": "1K"}, "env": {"FOO": "bar"}}
    r = cordon.run(["/bin/sh", "-c", "echo $FOO; head -c 5000 /dev/zero"], policy=pol, cordon_bin=cordon_path)
    assert r.status == "output-limit"
    assert r.stdout_data.startswith(b"bar\n")


def test_setup_error_is_a_report(cordon_path, workspace):
    r = cordon.run(["/nonexistent/cmd"], cordon_bin=cordon_path)
    assert r.status == "setup-error" and r.reason


def test_no_report_raises(tmp_path):
    fake = tmp_path / "fake-cordon"
    fake.write_text("#!/bin/sh\necho broken >&2\nexit 125\n")
    fake.chmod(0o755)
    with pytest.raises(cordon.CordonError, match="broken"):
        cordon.run(["true"], cordon_bin=str(fake))


# Issue 28, friction: no cordon binary is a CordonError naming what was
# looked for.
def test_missing_binary_is_a_cordon_error(tmp_path, monkeypatch):
    with pytest.raises(cordon.CordonError) as e:
        cordon.run(["true"], cordon_bin=str(tmp_path / "nowhere" / "cordon"))
    assert str(tmp_path / "nowhere" / "cordon") in str(e.value)
    monkeypatch.setenv("CORDON", str(tmp_path / "gone"))
    with pytest.raises(cordon.CordonError) as e:
        cordon.run(["true"])
    assert "$CORDON" in str(e.value) and str(tmp_path / "gone") in str(e.value)
    monkeypatch.delenv("CORDON")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(cordon.CordonError) as e:
        cordon.run(["true"])
    assert "not on PATH" in str(e.value) and str(tmp_path) in str(e.value)
