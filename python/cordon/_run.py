"""cordon.run: one command in a boundary, through the CLI or a server."""
import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Dict, Optional, Sequence, Union

from .errors import CordonError
from .report import Report

PolicyArg = Union[None, str, os.PathLike, Dict[str, Any]]


def _dur(timeout) -> str:
    if isinstance(timeout, (int, float)):
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        return f"{timeout:g}s" if timeout >= 0.001 else "1ms"
    return str(timeout)


def _absolute_paths(policy: Dict[str, Any], base: str) -> Dict[str, Any]:
    """A policy given as a dict has no file: its relative paths are the
    caller's, against the current directory (cordon would resolve them
    against the policy file's directory, a temporary one)."""
    p = json.loads(json.dumps(policy))

    def fix(v):
        return v if not isinstance(v, str) or v.startswith("/") else os.path.join(base, v)

    fs = p.get("filesystem")
    if isinstance(fs, dict):
        for key in ("read", "write"):
            if isinstance(fs.get(key), list):
                fs[key] = [fix(v) for v in fs[key]]
    if isinstance(p.get("inputs"), list):
        p["inputs"] = [fix(v) for v in p["inputs"]]
    sec = p.get("secrets")
    if isinstance(sec, dict):
        for v in sec.values():
            if isinstance(v, dict) and isinstance(v.get("file"), str):
                v["file"] = fix(v["file"])
    return p


def find_cordon(cordon_bin: Optional[str] = None) -> str:
    """The cordon binary: cordon_bin, else $CORDON, else cordon on PATH.
    CordonError, naming what was looked for, if that is no executable."""
    if cordon_bin:
        b, what = os.fspath(cordon_bin), f"cordon_bin={os.fspath(cordon_bin)!r}"
    elif os.environ.get("CORDON"):
        b, what = os.environ["CORDON"], f"$CORDON={os.environ['CORDON']!r}"
    else:
        b = shutil.which("cordon")
        if not b:
            raise CordonError("no cordon binary: 'cordon' is not on PATH "
                              f"({os.environ.get('PATH', '')}); pass cordon_bin=, set $CORDON, or install cordon")
        return b
    if os.sep not in b:
        found = shutil.which(b)
        if not found:
            raise CordonError(f"no cordon binary: {what} is not on PATH")
        return found
    if not os.path.isfile(b) or not os.access(b, os.X_OK):
        raise CordonError(f"no cordon binary: {what}: "
                          f"{'not an executable file' if os.path.exists(b) else 'no such file'}")
    return b


def run(argv: Sequence[str], policy: PolicyArg = None, timeout=None, stdin=None,
        cordon_bin: Optional[str] = None, server: Optional[str] = None,
        extra_args: Sequence[str] = (), retry: Any = "default") -> Report:
    """Run argv inside a cordon boundary and return its report.

    policy: a policy file path, or a dict (the policy JSON); timeout: seconds
    or a cordon DUR ("30s"), the run's wall-clock limit (status "timeout");
    stdin: bytes or str for the command's standard input (else none);
    server: the Unix socket of a `cordon serve` (POST /v1/runs) instead of the
    CLI. Either way the report also carries what was captured, in
    report.stdout_data and report.stderr_data (bytes; through a server, at
    most its --run-output-max of each). The report's status is
    the outcome: run() raises CordonError only when no report came back
    (no cordon binary, an unreachable server...). retry: through a server,
    how a 429 or 503 is retried (cordon.Retry; None: not; by default
    Retry()'s backoff)."""
    argv = [os.fspath(a) for a in argv]
    if not argv:
        raise ValueError("argv is empty")
    if server is not None:
        from .client import Client, Retry
        c = Client(server, retry=Retry() if retry == "default" else retry)
        return c.run(argv, policy=policy, stdin=stdin, timeout=timeout)
    cmd = [find_cordon(cordon_bin), "run"]
    # The report (and a dict policy) in a private directory of our own,
    # created 0700 for this call and removed after it.
    with tempfile.TemporaryDirectory(prefix="cordon-py-") as tmp:
        if isinstance(policy, dict):
            ppath = os.path.join(tmp, "policy.json")
            with open(ppath, "w") as f:
                json.dump(_absolute_paths(policy, os.getcwd()), f)
            cmd += ["--policy", ppath]
        elif policy is not None:
            cmd += ["--policy", os.fspath(policy)]
        rpath = os.path.join(tmp, "report.json")
        cmd += ["--report", rpath]
        if timeout is not None:
            cmd += ["--time-limit", _dur(timeout)]
        cmd += list(extra_args)
        cmd += ["--", *argv]
        data = stdin.encode() if isinstance(stdin, str) else stdin
        try:
            proc = subprocess.run(cmd, input=data, stdin=None if data is not None else subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:  # gone or not executable since find_cordon
            raise CordonError(f"cannot start the cordon binary {cmd[0]}: {e.strerror or e}") from e
        try:
            with open(rpath, "rb") as f:
                text = f.read()
        except FileNotFoundError:
            text = b""
    if not text.strip():
        raise CordonError(f"cordon wrote no report (exit {proc.returncode}): "
                          f"{proc.stderr.decode(errors='replace').strip()}")
    rep = Report.from_json(text)
    rep.stdout_data = proc.stdout
    rep.stderr_data = proc.stderr
    rep.exit_status = proc.returncode
    return rep
