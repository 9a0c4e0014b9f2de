#!/usr/bin/env python3
"""Validates registry YAML files against the JSON Schema `steward schema` writes.

usage: validate_schema.py SCHEMA PATH...   (a PATH that is a directory is searched for *.yaml)
Files without a top-level `namespace` (host configs, test data) are not registry files and are
skipped. Prints one line per invalid file and exits 1 if any, else prints the count checked.
"""
import json
import pathlib
import sys

import jsonschema
import yaml


def registry_files(paths):
    for p in map(pathlib.Path, paths):
        for f in sorted(p.rglob("*.yaml")) if p.is_dir() else [p]:
            try:
                doc = yaml.safe_load(f.read_text())
            except (yaml.YAMLError, UnicodeDecodeError):
                continue  # not YAML this checker reads; steward check has its own cases
            if isinstance(doc, dict) and "namespace" in doc:
                yield f, doc


def main():
    schema = json.loads(pathlib.Path(sys.argv[1]).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    checked, bad = 0, 0
    for f, doc in registry_files(sys.argv[2:]):
        checked += 1
        errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
        for e in errors[:3]:
            where = "/".join(str(x) for x in e.absolute_path)
            print(f"{f}: {where}: {e.message}")
        bad += bool(errors)
    print(f"checked {checked} files, {bad} invalid")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
