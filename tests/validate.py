#!/usr/bin/python3
"""Validate JSON documents against a schema: validate.py SCHEMA FILE...
Prints one line per invalid file and exits 1 if any is invalid."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in sys.argv[2:]:
    try:
        doc = json.load(open(path))
    except Exception as e:  # a report that is not JSON at all
        print(f"{path}: not JSON: {e}")
        bad += 1
        continue
    for err in validator.iter_errors(doc):
        print(f"{path}: {'/'.join(map(str, err.absolute_path))}: {err.message}")
        bad += 1
        break
sys.exit(1 if bad else 0)
