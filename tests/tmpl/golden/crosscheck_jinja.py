#!/usr/bin/env python3
"""Renders every golden case with Python's Jinja2 and compares with the .out file.

The engine in src/tmpl/ aims to render these cases exactly like Jinja 3.1 configured as below,
so this script is the independent check of the golden outputs. It is a developer tool (CI does
not need Python or Jinja2):

    python3 tests/tmpl/golden/crosscheck_jinja.py          # compare
    python3 tests/tmpl/golden/crosscheck_jinja.py --write  # (re)write the .out files from Jinja

Contexts are loaded with sorted object keys, since nlohmann::json (our context type) iterates
objects in key order.
"""
import json
import pathlib
import sys

import jinja2

HERE = pathlib.Path(__file__).resolve().parent


def main() -> int:
    write = "--write" in sys.argv[1:]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    failures = 0
    cases = sorted(p for p in HERE.glob("*.j2"))
    for template in cases:
        context_path = template.with_suffix(".json")
        context = {}
        if context_path.exists():
            context = json.loads(context_path.read_text(), object_pairs_hook=lambda pairs: dict(sorted(pairs)))
        rendered = env.get_template(template.name).render(**context)
        out_path = template.with_suffix(".out")
        if write:
            out_path.write_text(rendered)
            continue
        expected = out_path.read_text() if out_path.exists() else None
        if rendered != expected:
            failures += 1
            print(f"MISMATCH {template.name}")
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
