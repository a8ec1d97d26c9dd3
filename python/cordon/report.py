"""cordon.report/1 as Python objects (the classes are generated from
schemas/report.schema.json into _report_types.py)."""
from . import _report_types
from ._report_types import *  # noqa: F401,F403

__all__ = []
__all__ += _report_types.__all__
