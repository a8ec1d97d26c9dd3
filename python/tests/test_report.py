"""The typed report objects against schemas/report.schema.json."""
import dataclasses
import json
import typing

import pytest

import cordon
from cordon import _report_types
from conftest import ROOT

SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())


def test_generated_types_match_the_schema():
    # The committed classes are what the generator makes of the schema in
    # the tree: a schema change without a new generation fails here.
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_report", ROOT / "python" / "tools" / "gen_report.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = (ROOT / "python" / "cordon" / "_report_types.py").read_text()
    assert gen.generate(ROOT / "schemas" / "report.schema.json") == text, \
        "run: python3 python/tools/gen_report.py > python/cordon/_report_types.py"


def _walk(node, cls, where):
    """Every property of an object node is a field of cls, recursively."""
    if "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    props = node.get("properties")
    if not props:
        return
    names = {f.name for f in dataclasses.fields(cls)}
    assert set(props) == names, f"{where}: schema {sorted(props)} vs {cls.__name__} {sorted(names)}"
    hints = typing.get_type_hints(cls)
    for name, sub in props.items():
        t = hints[name]
        while typing.get_origin(t) in (typing.Union, list, dict):
            args = [a for a in typing.get_args(t) if a is not type(None)]
            t = args[-1]
        if isinstance(t, type) and dataclasses.is_dataclass(t):
            if "$ref" in sub:
                sub = SCHEMA["$defs"][sub["$ref"].rsplit("/", 1)[-1]]
            sub = sub.get("items", sub)
            if "patternProperties" in sub:
                (sub,) = sub["patternProperties"].values()
            _walk(sub, t, f"{where}.{name}")


def test_every_schema_property_is_a_field():
    _walk(SCHEMA, cordon.Report, "report")


def test_report_from_a_real_run_validates_and_round_trips(cordon_path, workspace):
    jsonschema = pytest.importorskip("jsonschema")
    r = cordon.run(["/bin/sh", "-c", "echo hi; echo err >&2; exit 3"], cordon_bin=cordon_path)
    jsonschema.validate(r.to_dict(), SCHEMA)
    assert isinstance(r, _report_types.Report)
    assert isinstance(r.verdicts, _report_types.Verdicts)
    assert isinstance(r.usage, _report_types.Usage) and r.usage.wall_seconds >= 0
    assert isinstance(r.stdout, _report_types.Stream) and r.stdout.bytes == 3
    assert isinstance(r.enforcement, _report_types.Enforcement) and r.enforcement.user_ns is True
    assert r.to_dict()["status"] == "exit-nonzero"
    again = cordon.Report.from_dict(json.loads(json.dumps(r.to_dict())))
    assert again == r


def test_unknown_keys_are_kept():
    r = cordon.Report.from_dict({"schema": "cordon.report/1", "status": "ok", "session": {"id": "s-1", "x_new": 1},
                                 "execs": [{"status": "ok", "exit_code": 0}], "x_future": [1],
                                 "denials": [{"kind": "syscall", "target": "ptrace", "count": 2}]})
    assert r.ok and r.session.id == "s-1" and r.session.extra == {"x_new": 1}
    assert r.execs[0].exit_code == 0
    assert r.denials[0].target == "ptrace" and r.denials[0].count == 2
    assert r.extra.keys() == {"x_future"}
