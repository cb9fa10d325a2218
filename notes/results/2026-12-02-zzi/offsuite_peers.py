#!/usr/bin/env python3
"""Peers on the off-suite problems (zzg): SDPA's cuDNN and FlashAttention-2 on the plain and causal
problems, FlexAttention (Triton) on the others (--flex-all: on every problem). Reuses peers.py's
inputs, timing and JSON lines, so compare.py reads the output beside `flexjit bench --json`."""
import argparse, json, sys
sys.path.insert(0, sys.argv[sys.argv.index("--peers") + 1] if "--peers" in sys.argv else ".")
import peers
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from torch.nn.attention.flex_attention import create_block_mask

ap = argparse.ArgumentParser()
ap.add_argument("--suite", required=True)
ap.add_argument("--peers", default=".")
ap.add_argument("--only", default="")
ap.add_argument("--flex-all", action="store_true")
ap.add_argument("--no-flex", action="store_true")
ap.add_argument("--no-sdpa", action="store_true")
a = ap.parse_args()
only = set(filter(None, a.only.split(",")))
print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__}), flush=True)
for p in json.load(open(a.suite))["problems"]:
    if only and p["name"] not in only:
        continue
    torch.manual_seed(0)
    env = peers.buffers(p, "cuda")
    score, mask = peers.mods(p, env)
    bm = create_block_mask(mask, 1, 1, p["Sq"], p["Skv"], device="cuda") if mask else None
    density = min(1.0, max(0.0, 1.0 - bm.sparsity() / 100.0)) if bm is not None else 1.0
    q, k, v = peers.inputs(p, "cuda", True)
    gqa = p["Hq"] != p["Hkv"]
    plain = not p.get("py_score_mod") and p.get("py_mask_mod") in (None, "q >= k")
    if not a.no_flex and (a.flex_all or not plain):
        try:
            r = peers.timed(lambda: peers.flex(q, k, v, score_mod=score, block_mask=bm, enable_gqa=gqa), q, k, v, True)
            peers.emit("flex", p, density, r, env)
        except Exception as e:
            print(json.dumps({"system": "flex", "name": p["name"], "error": str(e)[:300]}), flush=True)
    if plain and not a.no_sdpa:
        causal = p.get("py_mask_mod") == "q >= k"
        for name, be in (("fa2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
            try:
                with sdpa_kernel([be]):
                    r = peers.timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa),
                                    q, k, v, True)
                peers.emit(name, p, density, r, env)
            except Exception as e:
                print(json.dumps({"system": name, "name": p["name"], "error": str(e)[:300]}), flush=True)
