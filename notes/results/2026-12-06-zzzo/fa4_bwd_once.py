#!/usr/bin/env python3
"""FA4's (flash_attn.cute) forward and backward on one suite shape, a few times, for ncu to
capture (prepared in (zzzn), not run). Usage: fa4_bwd_once.py [--causal] [--d 128] [--reps 4]"""
import argparse
import torch
from flash_attn.cute import flash_attn_func

a = argparse.ArgumentParser()
a.add_argument("--causal", action="store_true")
a.add_argument("--d", type=int, default=128)
a.add_argument("--reps", type=int, default=4)
args = a.parse_args()
B, H, S = 4, 16, 4096
q, k, v = (torch.randn(B, S, H, args.d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
for _ in range(args.reps):
    o = flash_attn_func(q, k, v, causal=args.causal)
    o = o[0] if isinstance(o, tuple) else o
    o.backward(torch.ones_like(o))
torch.cuda.synchronize()
