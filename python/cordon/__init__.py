"""cordon: run untrusted code inside a cordon boundary, from Python.

    import cordon
    r = cordon.run(["python3", "-c", "print(6*7)"], timeout=10)
    r.status, r.stdout_data          # "ok", b"42\\n"

    with cordon.Client("/run/cordon.sock").session(policy={}) as s:
        s.exec(["sh", "-c", "echo hi > f"]); s.files.read("f")

Only the standard library; the CLI (`cordon run`) or a `cordon serve`
socket does the work."""
from ._run import find_cordon, run
from . import aio  # noqa: F401 (cordon.aio.Client)
from .client import Client, Event, ExecHandle, ExecResult, FileEntry, Files, Pool, PtyConnection, Retry, Session
from .errors import CordonError, ServerUnreachable
from .report import *  # noqa: F401,F403
from .report import Report

__version__ = "0.1.0"
__all__ = ["aio", "run", "find_cordon", "Client", "Pool", "Session", "Files", "FileEntry", "Event", "ExecResult",
           "ExecHandle", "PtyConnection", "Retry", "CordonError", "ServerUnreachable", "Report"]
