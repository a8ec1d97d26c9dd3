"""The base of the typed report objects: built from the report's JSON,
typed by the dataclass annotations, and kept whole (to_dict gives back the
JSON as it came, keys this version does not know included)."""
import dataclasses
import typing
from typing import Any, Dict


def _convert(hint, value):
    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union:
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if origin is list and isinstance(value, list):
        return [_convert(args[0], v) for v in value]
    if origin is dict and isinstance(value, dict):
        return {k: _convert(args[1], v) for k, v in value.items()}
    if isinstance(hint, type) and issubclass(hint, ReportObject) and isinstance(value, dict):
        return hint.from_dict(value)
    return value


class ReportObject:
    """A JSON object of a cordon report, as a dataclass."""

    @classmethod
    def from_dict(cls, data: Dict[str, Any]):
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        hints = typing.get_type_hints(cls)
        kw = {f.name: _convert(hints[f.name], data[f.name])
              for f in dataclasses.fields(cls) if f.name in data}
        obj = cls(**kw)
        object.__setattr__(obj, "_raw", data)
        return obj

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object this was built from (or its fields, if built by hand)."""
        raw = getattr(self, "_raw", None)
        if raw is not None:
            return raw
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    @property
    def extra(self) -> Dict[str, Any]:
        """Keys of the JSON this version has no field for."""
        names = {f.name for f in dataclasses.fields(self)}
        return {k: v for k, v in (getattr(self, "_raw", None) or {}).items() if k not in names}
