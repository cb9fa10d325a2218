#!/usr/bin/env python3
"""Stall samples of the dK/dV kernel's consumer warps (instructions run 6-10 or >14 times a tile:
eight consumer warps) by the site they wait at, from an ncu source-counter export
(`ncu -i REP --page source --csv --print-source sass`). Each sample is charged to the instruction
that could not issue; a wait loop (SYNCS.PHASECHK.TRYWAIT then @!P BRA) is named by the barrier's
shared-memory offset, a WARPGROUP.DEPBAR by the HGMMA group it waits for (the last HGMMA before it).
Usage: consumer_stalls.py SRC.csv TILES [TOP]"""
import csv
import sys

path, tiles = sys.argv[1], int(sys.argv[2])
top = int(sys.argv[3]) if len(sys.argv) > 3 else 20
rows = list(csv.reader(open(path)))
start = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
h = {n: i for i, n in enumerate(rows[start])}
ins = [r for r in rows[start + 1:] if len(r) >= len(h)]
stall_cols = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]
all_samples = sum(int(r[h["Warp Stall Sampling (All Samples)"]] or 0) for r in ins)
sites = {}
consumer = 0
last_hgmma, last_trywait = "", ""
for r in ins:
    src = r[h["Source"]].strip()
    per_tile = int(r[h["Instructions Executed"]] or 0) / tiles
    s = int(r[h["Warp Stall Sampling (All Samples)"]] or 0)
    if "HGMMA" in src:
        last_hgmma = src.split()[0 if not src.startswith("@") else 1] + " " + src.split(",")[0].split()[-1]
    if "TRYWAIT" in src:
        last_trywait = src.split("[")[1].split("]")[0]
    if not (6 <= per_tile <= 10 or per_tile > 14):
        continue
    consumer += s
    reasons = sorted(((int(r[h[c]] or 0), c[6:]) for c in stall_cols), reverse=True)
    main = reasons[0][1] if reasons and reasons[0][0] else "-"
    if "DEPBAR" in src:
        key = f"wgmma wait after {last_hgmma}"
    elif "BRA" in src and main == "long_sb":
        key = f"mbarrier wait [{last_trywait}]"
    elif "BAR.SYNC" in src or main == "barrier":
        key = f"named barrier / warpgroup barrier ({main})"
    else:
        key = f"{main}: {src.split()[1 if src.startswith('@') else 0].split('.')[0]}"
    sites[key] = sites.get(key, 0) + s
print(f"consumer warps: {100 * consumer / all_samples:.1f} % of {all_samples} samples")
for k, v in sorted(sites.items(), key=lambda kv: -kv[1])[:top]:
    print(f"  {100 * v / consumer:5.1f} %  {k}")
