#!/usr/bin/env python3
"""(zq) Are FlexAttention's FLASH backend's gradients right on the suite's prefix LM mask? Its
backward timed 636.8 TF/s in zq3 (ze3: 503), faster than its own dense backward (570) at half the
usual backward / forward time ratio. Gradients of FLASH and of the Triton backend (bf16) against
float32 Triton from the same inputs; causal and the sliding window as controls."""
import torch, json
from torch.nn.attention.flex_attention import flex_attention, create_block_mask
torch._dynamo.config.recompile_limit = 1000
torch._dynamo.config.cache_size_limit = 1000
flex = torch.compile(flex_attention, dynamic=False)
masks = {
    "prefix_lm": lambda b, h, q, k: (k <= 512) | (q >= k),
    "causal": lambda b, h, q, k: q >= k,
    "sliding_window": lambda b, h, q, k: (q >= k) & (q - k <= 1024),
}
B, H, S, D = 2, 4, 4096, 128
for name, m in masks.items():
    torch.manual_seed(1)
    bm = create_block_mask(m, 1, 1, S, S, device="cuda")
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    do = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    def run(dtype, opts):
        qq, kk, vv = (t.to(dtype).requires_grad_(True) for t in (q, k, v))
        o = flex(qq, kk, vv, block_mask=bm, kernel_options=opts) if opts else flex(qq, kk, vv, block_mask=bm)
        o.backward(do.to(dtype))
        return [t.float() for t in (o, qq.grad, kk.grad, vv.grad)]
    ref = run(torch.float32, None)
    for system, opts in (("triton_bf16", None), ("flash_bf16", {"BACKEND": "FLASH"})):
        try:
            got = run(torch.bfloat16, opts)
            err = {n: round(((g - r).norm() / r.norm()).item(), 5) for n, g, r in zip(("o", "dq", "dk", "dv"), got, ref)}
            print(json.dumps({"mask": name, "system": system, "rel_rms_err": err}), flush=True)
        except Exception as e:
            print(json.dumps({"mask": name, "system": system, "error": str(e)[:200]}), flush=True)
