#!/usr/bin/env python3
"""(zzf4) Decode steps, L2 cold, graph-captured: pages of 16/32/64 at B 1/8/32/64 and 1k-4k keys,
and contiguous caches past 16384 keys (the TMA path). --sdpa adds cuDNN on the same contiguous
tensors."""
import sys
from splits_matrix import step

sdpa = "--sdpa" in sys.argv[1:]
for B in (1, 8, 32, 64):
    for S in (1024, 2048, 4096):
        if B == 64 and S > 1024:
            continue
        for page_size in (16, 32, 64):
            step(B, S, page_size, sdpa)
for B, S in ((1, 32768), (4, 32768)):
    step(B, S, 0, sdpa)
