#!/usr/bin/env python3
"""(zq) Gradients of FA4 (flash_attn.cute.flash_attn_func, as peers.py calls it) and of
FlexAttention's FLASH backend against float32 FlexAttention (Triton) from the same bf16 inputs,
with the norm of each gradient over the reference's: zq4 found the FLASH backend's dq/dk/dv at a
relative error of 1.0 on causal, prefix LM and sliding-window masks (its output right)."""
import torch, json
from torch.nn.attention.flex_attention import flex_attention, create_block_mask
torch._dynamo.config.recompile_limit = 1000
torch._dynamo.config.cache_size_limit = 1000
flex = torch.compile(flex_attention, dynamic=False)
from flash_attn.cute import flash_attn_func

def report(tag, got, ref):
    names = ("o", "dq", "dk", "dv")
    err = {n: round(((g - r).norm() / r.norm()).item(), 5) for n, g, r in zip(names, got, ref)}
    ratio = {n: round((g.norm() / r.norm()).item(), 5) for n, g, r in zip(names, got, ref)}
    print(json.dumps({"case": tag, "rel_rms_err": err, "norm_ratio": ratio}), flush=True)

B, H = 2, 4
for S, D, causal in ((4096, 128, True), (4096, 128, False), (4096, 64, True), (1000, 128, True)):
    torch.manual_seed(2)
    q, k, v, do = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    bm = create_block_mask(lambda b, h, qi, ki: qi >= ki, 1, 1, S, S, device="cuda") if causal else None
    def ref_run():
        qq, kk, vv = (t.float().requires_grad_(True) for t in (q, k, v))
        o = flex(qq, kk, vv, block_mask=bm)
        o.backward(do.float())
        return [t.float() for t in (o, qq.grad, kk.grad, vv.grad)]
    ref = ref_run()
    tag = f"S{S} d{D} {'causal' if causal else 'noop'}"
    try:
        qt, kt, vt = (t.transpose(1, 2).contiguous().requires_grad_(True) for t in (q, k, v))
        o = flash_attn_func(qt, kt, vt, causal=causal)
        o = o[0] if isinstance(o, tuple) else o
        o.backward(do.transpose(1, 2).contiguous())
        report("fa4 " + tag, [t.transpose(1, 2).float() for t in (o, qt.grad, kt.grad, vt.grad)], ref)
    except Exception as e:
        print(json.dumps({"case": "fa4 " + tag, "error": str(e)[:200]}), flush=True)
    try:
        qq, kk, vv = (t.clone().requires_grad_(True) for t in (q, k, v))
        o = flex(qq, kk, vv, block_mask=bm, kernel_options={"BACKEND": "FLASH"})
        o.backward(do)
        report("flash " + tag, [t.float() for t in (o, qq.grad, kk.grad, vv.grad)], ref)
    except Exception as e:
        print(json.dumps({"case": "flash " + tag, "error": str(e)[:200]}), flush=True)
