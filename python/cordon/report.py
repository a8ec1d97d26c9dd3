"""cordon.report/1 as Python objects (the classes are generated from
schemas/report.schema.json into _report_types.py)."""
import json
from typing import Any, Dict, List, Optional

from ._report_types import *  # noqa: F401,F403
from ._report_types import Report, __all__ as _types


def _ok(self) -> bool:
    """status is "ok" (the command exited 0 inside a clean boundary)."""
    return self.status == "ok"


def _execs(self) -> List[Report]:
    """A session's report (DELETE /v1/sessions/{id}): each exec's report."""
    return [Report.from_dict(e) for e in self.extra.get("execs", []) if isinstance(e, dict)]


def _session(self) -> Optional[Dict[str, Any]]:
    return self.extra.get("session")


Report.ok = property(_ok)
Report.execs = property(_execs)
Report.session = property(_session)
Report.from_json = classmethod(lambda cls, text: cls.from_dict(json.loads(text)))
# What cordon.run through the CLI captured (the report has counts and hashes).
Report.stdout_data = b""
Report.stderr_data = b""

__all__ = list(_types)
