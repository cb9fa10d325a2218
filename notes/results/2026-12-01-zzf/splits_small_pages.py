#!/usr/bin/env python3
"""(zzf3) splits_matrix.py's steps (L2 cold, graph-captured) over pages of 16 and 32 keys at
B = 4, 8, 16 and 1k-4k keys, under the environment's FLEXJIT_DECODE_SPLITS."""
from splits_matrix import step

for B in (4, 8, 16):
    for S in (1024, 2048, 4096):
        for page_size in (16, 32):
            step(B, S, page_size, False)
