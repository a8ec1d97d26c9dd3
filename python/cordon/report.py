"""cordon.report/1 as Python objects (the classes are generated from
schemas/report.schema.json into _report_types.py)."""
import json

from ._report_types import *  # noqa: F401,F403
from ._report_types import Report, __all__ as _types


def _ok(self) -> bool:
    """status is "ok" (the command exited 0 inside a clean boundary)."""
    return self.status == "ok"


Report.ok = property(_ok)
Report.from_json = classmethod(lambda cls, text: cls.from_dict(json.loads(text)))
# What cordon.run through the CLI captured (the report has counts and hashes).
Report.stdout_data = b""
Report.stderr_data = b""

__all__ = list(_types)
