"""A PEP 517 build backend for the pure-Python cordon package, in the tree.

`pip install ./python` then needs nothing from a package index, in a plain
venv too (setuptools' backend needs `wheel` there, which a fresh venv lacks
on Debian 12 and which an offline machine cannot fetch). It builds a wheel and
an sdist of python/cordon and nothing else: the package is standard library
only and has no compiled part.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project():
    with open(os.path.join(_HERE, "pyproject.toml"), "rb") as f:
        text = f.read().decode()
    try:
        import tomllib
        return tomllib.loads(text)["project"]
    except ImportError:  # Python < 3.11: the few plain fields this reads
        sect = text.split("[project]", 1)[1].split("\n[", 1)[0]
        return {k: v for k, v in re.findall(r'^(\w[\w-]*)\s*=\s*"([^"]*)"', sect, re.M)}


def _metadata(p):
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"],
             "Summary: " + p.get("description", ""), "Requires-Python: " + p.get("requires-python", ">=3")]
    lic = p.get("license")
    if isinstance(lic, dict) and "text" in lic:
        lines.append("License: " + lic["text"])
    readme = os.path.join(_HERE, "README.md")
    body = ""
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = "\n" + f.read()
    return "\n".join(lines) + "\n" + body


def _package_files():
    root = os.path.join(_HERE, "cordon")
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".typed")):
                full = os.path.join(d, name)
                yield full, os.path.relpath(full, _HERE).replace(os.sep, "/")


def _record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (arc, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def _dist_info(p):
    return "%s-%s.dist-info" % (p["name"].replace("-", "_"), p["version"])


def _wheel(wheel_directory, editable):
    p = _project()
    name = "%s-%s-py3-none-any.whl" % (p["name"].replace("-", "_"), p["version"])
    di = _dist_info(p)
    record = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        def add(arc, data):
            z.writestr(zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0)), data)
            record.append(_record_line(arc, data))
        if editable:
            add("cordon_editable.pth", (_HERE + "\n").encode())
        else:
            for full, arc in _package_files():
                with open(full, "rb") as f:
                    add(arc, f.read())
        add(di + "/METADATA", _metadata(p).encode())
        add(di + "/WHEEL", b"Wheel-Version: 1.0\nGenerator: cordon_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        add(di + "/top_level.txt", b"cordon\n")
        record.append(di + "/RECORD,,")
        z.writestr(zipfile.ZipInfo(di + "/RECORD", date_time=(1980, 1, 1, 0, 0, 0)), "\n".join(record) + "\n")
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, False)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, True)


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (p["name"], p["version"])
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        extra = ["pyproject.toml", "README.md", "_build/cordon_build.py"]
        for full, arc in list(_package_files()) + [(os.path.join(_HERE, x), x) for x in extra]:
            if os.path.exists(full):
                t.add(full, arcname=base + "/" + arc)
        info = _metadata(p).encode()
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(info)
        t.addfile(ti, io.BytesIO(info))
    return name
