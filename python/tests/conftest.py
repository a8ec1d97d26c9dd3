"""Shared fixtures: the cordon binary under test ($CORDON, else the build
tree's), and a workspace directory to run in."""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cordon_bin():
    b = os.environ.get("CORDON") or str(ROOT / "build" / "cordon")
    return b if os.access(b, os.X_OK) else shutil.which("cordon")


@pytest.fixture
def cordon_path():
    b = cordon_bin()
    if not b:
        pytest.skip("no cordon binary (set $CORDON or build first)")
    return b


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    ws.mkdir()
    ws.chmod(0o755)
    monkeypatch.chdir(ws)
    return ws


def has_serve(b):
    if not b:
        return False
    p = subprocess.run([b, "serve", "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode == 0
