#!/usr/bin/env python3
"""Warp instructions executed per tile, by opcode, of two ncu source-counter exports
(`ncu -i REP --page source --csv --print-source sass`), largest difference first.
Usage: per_tile_opcodes.py A.csv TILES_A B.csv TILES_B   (zzzm3: src_noop_d128.csv 131072
src_long_causal_d128.csv 264192, the 64 x 128 tiles each kernel walks)."""
import csv
import sys
from collections import defaultdict


def per_tile(path, tiles):
    rows = list(csv.reader(open(path)))
    start = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
    head = {n: i for i, n in enumerate(rows[start])}
    by_op = defaultdict(float)
    for r in rows[start + 1:]:
        if len(r) < len(head):
            continue
        toks = r[head["Source"]].split()
        if not toks:
            continue
        op = toks[1] if toks[0].startswith("@") else toks[0]
        by_op[op.split(".")[0]] += int(r[head["Instructions Executed"]] or 0) / tiles
    return by_op


a, b = per_tile(sys.argv[1], int(sys.argv[2])), per_tile(sys.argv[3], int(sys.argv[4]))
print(f"per tile: {sum(a.values()):.0f} and {sum(b.values()):.0f}")
for op in sorted(set(a) | set(b), key=lambda o: -(b.get(o, 0) - a.get(o, 0)))[:25]:
    print(f"{op:12s} {a.get(op, 0):8.1f} {b.get(op, 0):8.1f} {b.get(op, 0) - a.get(op, 0):+8.1f}")
