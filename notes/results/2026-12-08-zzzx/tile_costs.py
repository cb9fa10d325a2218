#!/usr/bin/env python3
"""Stall samples per tile from ncu source-counter exports ((zzzp)'s `fa4ncu.tar.gz`: r/src_*.csv),
grouped by how often an instruction ran: an instruction that ran E times over a grid of C CTAs ran
E / C times a CTA, so the consumer warps' per-tile code is the group of 8 x (tiles a CTA) and its
subsets (full tiles only, masked only). Prints, per kernel, the groups with the most samples, then
the stall reasons per tile (samples / tile visits) for each kernel's consumer tile code.
Usage: tile_costs.py DIR   (DIR holds src_fj_noop_d128.csv, src_fj_causal_d128.csv,
src_fa4_noop.csv, src_fa4_causal.csv; B=4 H=16 S=4096: 2048 CTAs of 128 kv rows)."""
import csv
import sys
from collections import defaultdict

CTAS = 2048


def rows_of(path):
    rows = list(csv.reader(open(path)))
    start = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
    head = {n: i for i, n in enumerate(rows[start])}
    num = lambda r, k: float((r[head[k]] or "0").replace(",", ""))
    for r in rows[start + 1:]:
        if len(r) >= len(head):
            yield r, head, num


def groups(path):
    g = defaultdict(lambda: [0, 0.0])
    for r, head, num in rows_of(path):
        e = int(num(r, "Instructions Executed"))
        g[e][0] += 1
        g[e][1] += num(r, "Warp Stall Sampling (All Samples)")
    total = sum(v[1] for v in g.values())
    print(f"== {path}: {total:.0f} samples")
    for e in sorted(g, key=lambda e: -g[e][1])[:8]:
        print(f"  ran {e / CTAS:7.2f} x a CTA: {g[e][0]:4d} instructions, {g[e][1]:7.0f} samples ({100 * g[e][1] / total:4.1f} %)")


def reasons(path, per_cta_runs, tiles):
    """Stall samples per tile visit of the instructions that ran per_cta_runs times a CTA."""
    st = defaultdict(float)
    for r, head, num in rows_of(path):
        if num(r, "Instructions Executed") / CTAS in per_cta_runs:
            for k in head:
                if k.startswith("stall_") and "Not Issued" not in k:
                    st[k[6:]] += num(r, k) / (tiles * CTAS) * 1000
    return st


d = sys.argv[1]
for k in ("fj_noop_d128", "fj_causal_d128", "fa4_noop", "fa4_causal"):
    groups(f"{d}/src_{k}.csv")
# Per 64 query rows: flexjit's tiles are 64 x 128 (noop 64 a CTA, causal 33); FA4's noop tiles are
# 80 x 128 (52 a CTA, the last one partial: per 64 rows as 64), its causal tiles 64 x 128 (33).
cols = {
    "fj noop": reasons(f"{d}/src_fj_noop_d128.csv", {512, 504}, 64),
    "fj causal": reasons(f"{d}/src_fj_causal_d128.csv", {264, 248, 256}, 33),
    "fj masked only": reasons(f"{d}/src_fj_causal_d128.csv", {16}, 33),
    "fa4 noop": reasons(f"{d}/src_fa4_noop.csv", {416}, 64),
    "fa4 causal": reasons(f"{d}/src_fa4_causal.csv", {264}, 33),
}
print("consumer stall samples per tile of 64 query rows (x 1000 / CTA)")
print(f"{'reason':17s}" + "".join(f"{c:>15s}" for c in cols))
keys = sorted(set().union(*cols.values()), key=lambda k: -cols["fj causal"].get(k, 0))
for k in keys:
    if max(c.get(k, 0) for c in cols.values()) >= 1:
        print(f"{k:17s}" + "".join(f"{c.get(k, 0):15.0f}" for c in cols.values()))
print(f"{'sum':17s}" + "".join(f"{sum(c.values()):15.0f}" for c in cols.values()))
