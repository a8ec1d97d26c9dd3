#!/usr/bin/python3
"""Offline checks of deploy/kubernetes/ (no cluster: a client dry-run needs
an API server). Every *.yaml document is parsed (python3-yaml) and checked
against the schema of its apiVersion and kind in tests/k8s/schemas.json (a
JSON-schema subset; a field the schema does not list is an error, as a
typo the API server would drop or refuse); the CRI snippets are parsed as
TOML (tomllib); and the objects agree: the RuntimeClass's handler is the
runtime the containerd and CRI-O snippets define, every runtimeClassName is
a RuntimeClass here, every warm pool names a SandboxTemplate here, and a
run.cordon.policy annotation is a cordon policy (`cordon validate`).

  check_manifests.py SCHEMAS DIR [CORDON]
prints one line per error ("FILE: document N (KIND): PATH: what") and
exits 1 if there is any, else prints the objects checked."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

import yaml

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}


def typ_ok(v, t):
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    return isinstance(v, TYPES[t])


def check(v, s, defs, path, errs):
    if "$ref" in s:
        return check(v, defs[s["$ref"]], defs, path, errs)
    if "type" in s:
        ts = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(typ_ok(v, t) for t in ts):
            errs.append("%s: %r is not %s" % (path, v, " or ".join(ts)))
            return
    if "enum" in s and v not in s["enum"]:
        errs.append("%s: %r is not one of %s" % (path, v, ", ".join(map(str, s["enum"]))))
    if "pattern" in s and isinstance(v, str) and not re.search(s["pattern"], v):
        errs.append("%s: %r does not match %s" % (path, v, s["pattern"]))
    if isinstance(v, int) and not isinstance(v, bool):
        if "minimum" in s and v < s["minimum"]:
            errs.append("%s: %d is below %d" % (path, v, s["minimum"]))
        if "maximum" in s and v > s["maximum"]:
            errs.append("%s: %d is above %d" % (path, v, s["maximum"]))
    if isinstance(v, list):
        if len(v) < s.get("minItems", 0):
            errs.append("%s: at least %d items" % (path, s["minItems"]))
        for i, x in enumerate(v):
            check(x, s.get("items", {}), defs, "%s[%d]" % (path, i), errs)
    if isinstance(v, dict) and ("properties" in s or "additionalProperties" in s):
        for r in s.get("required", []):
            if r not in v:
                errs.append("%s: %s is required" % (path, r))
        props = s.get("properties", {})
        for k, x in v.items():
            if k in props:
                check(x, props[k], defs, path + "." + k, errs)
            elif "additionalProperties" in s:
                check(x, s["additionalProperties"], defs, path + "." + k, errs)
            else:
                errs.append("%s: unknown field %s" % (path, k))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    schemas = json.load(open(sys.argv[1]))
    top, cordon = sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else None
    defs, kinds = schemas["definitions"], schemas["kinds"]
    errs, objs, toml = [], [], {}
    for f in sorted(glob.glob(os.path.join(top, "*.yaml"))):
        name = os.path.basename(f)
        try:
            docs = [d for d in yaml.safe_load_all(open(f)) if d is not None]
        except yaml.YAMLError as e:
            errs.append("%s: %s" % (name, str(e).replace("\n", " ")))
            continue
        for n, d in enumerate(docs, 1):
            if not isinstance(d, dict):
                errs.append("%s: document %d is not an object" % (name, n))
                continue
            key = "%s %s" % (d.get("apiVersion"), d.get("kind"))
            where = "%s: document %d (%s)" % (name, n, d.get("kind"))
            if key not in kinds:
                errs.append("%s: no schema for %s" % (where, key))
                continue
            e = []
            check(d, kinds[key], defs, "", e)
            errs += ["%s: %s" % (where, x.lstrip(".")) for x in e]
            objs.append((where, d))
    for f in sorted(glob.glob(os.path.join(top, "*.toml")) + glob.glob(os.path.join(top, "*.conf"))):
        try:
            toml[os.path.basename(f)] = tomllib.load(open(f, "rb"))
        except tomllib.TOMLDecodeError as e:
            errs.append("%s: %s" % (os.path.basename(f), e))
    # The objects agree with each other and with the CRI snippets.
    rcs = {d["metadata"]["name"]: d for _, d in objs if d.get("kind") == "RuntimeClass"}
    handlers = set()
    for name, t in toml.items():
        cri = t.get("plugins", {}).get("io.containerd.grpc.v1.cri", {}).get("containerd", {}).get("runtimes", {})
        handlers |= {"containerd " + h for h, r in cri.items()
                     if r.get("runtime_type") == "io.containerd.runc.v2" and r.get("options", {}).get("BinaryName", "").endswith("/cordon-oci")}
        crio = t.get("crio", {}).get("runtime", {}).get("runtimes", {})
        handlers |= {"crio " + h for h, r in crio.items() if r.get("runtime_path", "").endswith("/cordon-oci")}
    for rn, rc in rcs.items():
        for eng in ("containerd", "crio"):
            if "%s %s" % (eng, rc.get("handler")) not in handlers:
                errs.append("RuntimeClass %s: handler %s is no %s runtime running cordon-oci here" % (rn, rc.get("handler"), eng))
    templates = {d["metadata"]["name"] for _, d in objs if d.get("kind") == "SandboxTemplate"}
    for where, d in objs:
        spec = d.get("spec", {}) if isinstance(d.get("spec"), dict) else {}
        pod = spec.get("podTemplate", {}).get("spec", {}) if d.get("kind") == "SandboxTemplate" else spec
        meta = spec.get("podTemplate", {}).get("metadata", {}) if d.get("kind") == "SandboxTemplate" else d.get("metadata", {})
        rcn = pod.get("runtimeClassName") if isinstance(pod, dict) else None
        if rcn is not None and rcn not in rcs:
            errs.append("%s: runtimeClassName %s is no RuntimeClass in %s" % (where, rcn, top))
        if d.get("kind") == "SandboxWarmPool" and spec.get("sandboxTemplateRef", {}).get("name") not in templates:
            errs.append("%s: sandboxTemplateRef %s is no SandboxTemplate here" % (where, spec.get("sandboxTemplateRef", {}).get("name")))
        pol = (meta or {}).get("annotations", {}).get("run.cordon.policy")
        if pol is not None and cordon:
            with tempfile.NamedTemporaryFile("w", suffix=".json") as tf:
                tf.write(pol)
                tf.flush()
                r = subprocess.run([cordon, "validate", tf.name], capture_output=True, text=True)
                if r.returncode != 0:
                    errs.append("%s: annotation run.cordon.policy: %s" % (where, (r.stderr or r.stdout).strip()))
    for e in errs:
        print(e)
    if errs:
        return 1
    print("checked: " + ", ".join(sorted("%s %s" % (d["kind"], d["metadata"]["name"]) for _, d in objs) + list(sorted(toml))))
    return 0


sys.exit(main())
