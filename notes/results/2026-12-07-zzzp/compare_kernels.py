#!/usr/bin/env python3
"""Two kernels' ncu source-counter exports (`ncu -i REP --page source --csv --print-source sass`)
side by side, per tile of equal work: stall samples by reason (share of each kernel's samples), and
shared-memory wavefronts and instructions by opcode (with its width suffix, e.g. LDS.64).
Usage: compare_kernels.py A.csv TILES_A B.csv TILES_B  (per 64 x 128 tile of scores: causal d128
67584, noop d128 131072 for B=4 H=16 S=4096)."""
import csv
import sys
from collections import defaultdict


def load(path, tiles):
    rows = list(csv.reader(open(path)))
    start = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
    head = {n: i for i, n in enumerate(rows[start])}
    stalls, wave, inst = defaultdict(float), defaultdict(float), defaultdict(float)
    num = lambda r, k: float((r[head[k]] or "0").replace(",", "")) if k in head else 0.0
    for r in rows[start + 1:]:
        if len(r) < len(head):
            continue
        toks = r[head["Source"]].split()
        if not toks:
            continue
        op = toks[1] if toks[0].startswith("@") else toks[0]
        for k in head:
            if k.startswith("stall_") and "Not Issued" not in k:
                stalls[k[6:]] += num(r, k)
        wave[op] += num(r, "L1 Wavefronts Shared") / tiles
        inst[op] += num(r, "Instructions Executed") / tiles
    total = sum(stalls.values()) or 1.0
    return {k: v / total for k, v in stalls.items()}, wave, inst, total


(sa, wa, ia, ta), (sb, wb, ib, tb) = load(sys.argv[1], int(sys.argv[2])), load(sys.argv[3], int(sys.argv[4]))
print(f"stall samples: {ta:.0f} and {tb:.0f}; share by reason (A, B)")
for k in sorted(set(sa) | set(sb), key=lambda k: -max(sa.get(k, 0), sb.get(k, 0)))[:12]:
    print(f"  {k:18s} {100 * sa.get(k, 0):6.1f} % {100 * sb.get(k, 0):6.1f} %")
print(f"shared wavefronts per tile: {sum(wa.values()):.0f} and {sum(wb.values()):.0f}; by opcode (A waves / inst, B waves / inst)")
for op in sorted(set(wa) | set(wb), key=lambda o: -max(wa.get(o, 0), wb.get(o, 0))):
    if max(wa.get(op, 0), wb.get(op, 0)) < 1:
        continue
    print(f"  {op:22s} {wa.get(op, 0):8.1f} / {ia.get(op, 0):7.1f}   {wb.get(op, 0):8.1f} / {ib.get(op, 0):7.1f}")
