#!/usr/bin/env python3
"""(zzd5) Decode split counts over a matrix of steps, the L2 cold (8 caches in rotation, as
scripts/latency.py --layers 8): flexjit's graph-captured time per step under the environment's
FLEXJIT_DECODE_SPLITS (unset: the rule), and with --sdpa also SDPA's cuDNN backend on the same
contiguous tensors. One JSON line per step.

  FLEXJIT_LIBRARY=... PYTHONPATH=python:scripts python3 splits_matrix.py [--sdpa]
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

import flexjit
from latency import rotating, timed_graph

LAYERS, HQ, HKV, D = 8, 32, 8, 128


def step(B, S, page_size, sdpa):
    dev = "cuda"
    q = torch.randn(B, HQ, 1, D, device=dev, dtype=torch.bfloat16)
    lens = torch.full((B,), S, device=dev, dtype=torch.int32)
    host_lens = [S] * B
    calls, sdpa_calls = [], []
    for _ in range(LAYERS):
        k = torch.randn(B, HKV, S, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn(B, HKV, S, D, device=dev, dtype=torch.bfloat16)
        if page_size:
            pages = S // page_size
            table = torch.randperm(B * pages, device=dev).view(B, pages).to(torch.int32)
            kp = torch.empty(B * pages, page_size, HKV, D, device=dev, dtype=torch.bfloat16)
            vp = torch.empty_like(kp)
            kp[table.flatten().long()] = k.permute(0, 2, 1, 3).reshape(B * pages, page_size, HKV, D)
            vp[table.flatten().long()] = v.permute(0, 2, 1, 3).reshape(B * pages, page_size, HKV, D)
            host_table = table.cpu().flatten().tolist()
            calls.append(lambda kp=kp, vp=vp, table=table, host_table=host_table: flexjit.decode(
                q, kp, vp, lens, page_table=table, host_seq_lens=host_lens, host_page_table=host_table))
        else:
            calls.append(lambda k=k, v=v: flexjit.decode(q, k, v, lens, host_seq_lens=host_lens))
        if sdpa:
            def cudnn(k=k, v=v):
                with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.CUDNN_ATTENTION):
                    return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            sdpa_calls.append(cudnn)
    row = {"B": B, "S": S, "page_size": page_size, "splits": os.environ.get("FLEXJIT_DECODE_SPLITS", "rule"),
           "bytes_mb": round(2 * B * HKV * S * D * 2 / 1e6, 2)}
    row["flexjit_us"] = round(timed_graph(rotating(calls)), 2)
    if sdpa:
        row["cudnn_us"] = round(timed_graph(rotating(sdpa_calls)), 2)
    print(json.dumps(row), flush=True)
    del calls, sdpa_calls
    torch.cuda.empty_cache()


def main():
    sdpa = "--sdpa" in sys.argv[1:]
    for B in (4, 8, 16, 32):
        for S in (1024, 2048, 4096, 8192):
            for page_size in (16, 64, 0):
                step(B, S, page_size, sdpa)
    return 0


if __name__ == "__main__":
    sys.exit(main())
