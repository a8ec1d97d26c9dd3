#!/usr/bin/env python3
"""Generate cordon/_report_types.py (typed report objects) from
schemas/report.schema.json. Run from the repository root:
    python3 python/tools/gen_report.py > python/cordon/_report_types.py
python/tests/test_report.py checks that the committed file is what this
prints for the schema in the tree, so a schema change without a new
generation fails the tests."""
import json
import pathlib
import sys

PRIM = {"integer": "int", "number": "float", "string": "str", "boolean": "bool"}
SINGULAR = {"denials": "Denial", "secret_exposures": "SecretExposure", "grants": "Grant",
            "endpoints": "Endpoint"}


def camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.replace("-", "_").split("_") if p)


class Gen:
    def __init__(self, schema):
        self.schema = schema
        self.defs = schema.get("$defs", {})
        self.classes = {}  # name -> source, in dependency order
        self.order = []

    def resolve(self, node):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            return name, self.defs[name]
        return None, node

    def annotate(self, node, prop, parent):
        """The Python type of a schema node (registering its class)."""
        ref, node = self.resolve(node)
        if "oneOf" in node or "anyOf" in node:
            alts = [a for a in node.get("oneOf", node.get("anyOf")) if a.get("type") != "null"]
            t = self.annotate(alts[0], prop, parent) if len(alts) == 1 else "Any"
            return f"Optional[{t}]"
        types = node.get("type")
        nullable = isinstance(types, list) and "null" in types
        if isinstance(types, list):
            rest = [t for t in types if t != "null"]
            types = rest[0] if len(rest) == 1 else None
        if types is None and "properties" in node:
            types = "object"
        if types == "object":
            if "properties" in node:
                name = camel(ref) if ref else camel(prop)
                if not ref and (parent != "Report" or name in self.classes):
                    name = parent + name
                t = self.klass(name, node)
            elif "patternProperties" in node:
                (inner,) = node["patternProperties"].values()
                t = f"Dict[str, {self.annotate(inner, prop[:-1] if prop.endswith('s') else prop, parent)}]"
            else:
                t = "Dict[str, Any]"
        elif types == "array":
            item = node.get("items", {})
            iname = SINGULAR.get(prop, camel(prop[:-1] if prop.endswith("s") else prop))
            t = f"List[{self.annotate(item, self.snake(iname), parent)}]"
        elif types in PRIM:
            t = PRIM[types]
        else:
            t = "str" if ("enum" in node or "const" in node or "pattern" in node) else "Any"
        return f"Optional[{t}]" if nullable and not t.startswith("Optional") else t

    @staticmethod
    def snake(camelname):
        out = ""
        for c in camelname:
            out += ("_" + c.lower()) if c.isupper() and out else c.lower()
        return out

    def klass(self, name, node):
        if name in self.classes:
            return name
        self.classes[name] = None  # reserve (recursion)
        base = "ReportBase" if name == "Report" else "ReportObject"
        lines = [f"@dataclass\nclass {name}({base}):"]
        doc = node.get("description")
        if doc:
            lines.append(f'    """{doc.strip()}"""')
        req = set(node.get("required", []))
        for prop, sub in node["properties"].items():
            t = self.annotate(sub, prop, name)
            opt = "" if prop in req else "  # optional"
            dflt = "field(default_factory=list)" if t.startswith("List[") else "None"
            ann = t if t.startswith("Optional[") or t.startswith("List[") else f"Optional[{t}]"
            lines.append(f"    {prop}: {ann} = {dflt}{opt}")
        self.classes[name] = "\n".join(lines) + "\n"
        self.order.append(name)
        return name

    def run(self):
        self.klass("Report", self.schema)
        head = ('"""Typed cordon.report/1 objects, generated from schemas/report.schema.json\n'
                'by python/tools/gen_report.py: do not edit by hand."""\n'
                "from dataclasses import dataclass, field\n"
                "from typing import Any, Dict, List, Optional\n\n"
                "from ._base import ReportBase, ReportObject\n")
        body = "\n\n".join(self.classes[n] for n in self.order)
        names = ", ".join(f'"{n}"' for n in self.order)
        return f"{head}\n\n{body}\n\n__all__ = [{names}]\n"


def generate(schema_path):
    return Gen(json.loads(pathlib.Path(schema_path).read_text())).run()


if __name__ == "__main__":
    root = pathlib.Path(__file__).resolve().parents[2]
    sys.stdout.write(generate(sys.argv[1] if len(sys.argv) > 1 else root / "schemas" / "report.schema.json"))
