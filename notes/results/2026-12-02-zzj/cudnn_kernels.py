#!/usr/bin/env python3
"""zzj3: one problem of users.json through SDPA's cuDNN backend, forward then backward, a few
times, so that ncu (outside) can list the kernels of the last iterations and their durations."""
import json, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
name, iters = sys.argv[1], int(sys.argv[2])
p = next(x for x in json.load(open("users.json"))["problems"] if x["name"] == name)
torch.manual_seed(0)
mk = lambda h, s: torch.randn(p["B"], h, s, p["D"], device="cuda", dtype=torch.bfloat16, requires_grad=True)
q, k, v = mk(p["Hq"], p["Sq"]), mk(p["Hkv"], p["Skv"]), mk(p["Hkv"], p["Skv"])
causal = p.get("py_mask_mod") == "q >= k"
with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
    for i in range(iters):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=p["Hq"] != p["Hkv"])
        o.backward(torch.ones_like(o))
torch.cuda.synchronize()
