"""The base of the typed report objects: built from the report's JSON,
typed by the dataclass annotations, and kept whole (to_dict gives back the
JSON as it came, keys this version does not know included)."""
import dataclasses
import json
import typing
from typing import Any, Dict, Optional, Type, TypeVar, Union, cast

_R = TypeVar("_R", bound="ReportObject")


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
    def from_dict(cls: Type[_R], data: Dict[str, Any]) -> _R:
        if not isinstance(data, dict):
            raise TypeError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        hints = typing.get_type_hints(cls)
        kw = {f.name: _convert(hints[f.name], data[f.name])
              for f in dataclasses.fields(cast(Any, cls)) if f.name in data}
        obj = cls(**kw)
        object.__setattr__(obj, "_raw", data)
        return obj

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object this was built from (or its fields, if built by hand)."""
        raw = getattr(self, "_raw", None)
        if raw is not None:
            return raw
        return {k: v for k, v in dataclasses.asdict(cast(Any, self)).items() if v is not None}

    @property
    def extra(self) -> Dict[str, Any]:
        """Keys of the JSON this version has no field for."""
        names = {f.name for f in dataclasses.fields(cast(Any, self))}
        return {k: v for k, v in (getattr(self, "_raw", None) or {}).items() if k not in names}


class ReportBase(ReportObject):
    """The base of Report (the whole report): what the schema's fields do not
    say. Not dataclass fields: to_dict gives the report's JSON alone."""

    #: what was captured of the run's output, when cordon.run (the CLI) or
    #: a one-shot run (Client.run) gave it; the report has counts and hashes
    stdout_data: bytes = b""
    stderr_data: bytes = b""
    #: cordon run's own exit status, when cordon.run ran the CLI
    exit_status: Optional[int] = None

    @property
    def ok(self) -> bool:
        """status is "ok" (the command exited 0); how it was held is
        verdicts.containment: clean, weaker (the degraded boundary) or
        violations."""
        return getattr(self, "status", None) == "ok"

    @classmethod
    def from_json(cls: Type[_R], text: Union[str, bytes]) -> _R:
        return cls.from_dict(json.loads(text))
