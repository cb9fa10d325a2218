#!/usr/bin/env python3
"""(zzf5) B = 1 and 8 decode steps (L2 cold, graph-captured), pages of 16/32/64, 1k and 4k keys."""
from splits_matrix import step

for B in (1, 8):
    for S in (1024, 4096):
        for page_size in (16, 32, 64):
            step(B, S, page_size, False)
