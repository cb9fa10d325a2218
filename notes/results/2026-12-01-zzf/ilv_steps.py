#!/usr/bin/env python3
"""(zzf1) Decode steps, L2 cold, graph-captured, under FLEXJIT_PROBE_ILV (one TMA box per page
rows and all 64-column slabs) or not: pages of 16/32/64 at B 1/8/32/64, 1k and 4k keys, and
contiguous caches past 16384 keys (the TMA path)."""
import sys
from splits_matrix import step

for B in (1, 8, 32, 64):
    for S in (1024, 4096):
        if B == 64 and S == 4096:
            continue
        for page_size in (16, 32, 64):
            step(B, S, page_size, False)
for B, S in ((1, 32768), (4, 32768)):
    step(B, S, 0, False)
