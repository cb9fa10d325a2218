#!/usr/bin/env python3
"""Replacing a PyTorch flex_attention call with flexjit, on the same tensors.

The FlexAttention version of ALiBi + causal attention:

    def score_mod(score, b, h, q_idx, kv_idx):
        return score + slope[h] * (kv_idx - q_idx)
    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx
    block_mask = create_block_mask(causal, None, None, S, S)
    out = torch.compile(flex_attention)(q, k, v, score_mod=score_mod, block_mask=block_mask)

becomes, with the mods as expression strings (no torch.compile; kernels are compiled by NVRTC
on first use and cached on disk):

    mask = flexjit.block_mask("q_idx >= kv_idx", B, H, S, S)
    out = flexjit.attention(q, k, v, score_mod="score + slope[h] * (kv_idx - q_idx)",
                            mask_mod="q_idx >= kv_idx", buffers={"slope": slope}, block_mask=mask)

This program runs both, compares the outputs and the gradients, and times forward and backward.
    python3 examples/python/flex_vs_flexjit.py [--batch 4 --heads 16 --seq 4096 --dim 128]
"""
import argparse
import time

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

import flexjit


def timed(fn, repeats):
    """Median milliseconds of fn() on the current stream (CUDA events)."""
    fn()  # warm-up: compiles (torch.compile / NVRTC) and autotunes
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    B, H, S, D = args.batch, args.heads, args.seq, args.dim
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    dout = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    slope = torch.tensor([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)], device="cuda")

    # --- PyTorch FlexAttention ---
    def score_mod(score, b, h, q_idx, kv_idx):
        return score + slope[h] * (kv_idx - q_idx)

    def causal(b, h, q_idx, kv_idx):
        return q_idx >= kv_idx

    t0 = time.perf_counter()
    flex_mask = create_block_mask(causal, None, None, S, S)
    compiled = torch.compile(flex_attention)
    flex_out = compiled(q, k, v, score_mod=score_mod, block_mask=flex_mask)
    torch.cuda.synchronize()
    flex_first = time.perf_counter() - t0

    # --- flexjit: the same call ---
    t0 = time.perf_counter()
    mask = flexjit.block_mask("q_idx >= kv_idx", B, H, S, S)
    flexjit_call = dict(score_mod="score + slope[h] * (kv_idx - q_idx)", mask_mod="q_idx >= kv_idx",
                        buffers={"slope": slope}, block_mask=mask)
    out = flexjit.attention(q, k, v, **flexjit_call)
    torch.cuda.synchronize()
    flexjit_first = time.perf_counter() - t0

    def rel(a, b):
        return ((a.double() - b.double()).norm() / b.double().norm()).item()

    print(f"B={B} H={H} S={S} D={D} bf16, ALiBi + causal")
    print(f"first call (compile + run): flex_attention {flex_first:.2f} s, flexjit {flexjit_first:.2f} s")
    print(f"output: relative difference {rel(out, flex_out):.2e}")
    grads = []
    for o in (flex_out, out):
        for x in (q, k, v):
            x.grad = None
        o.backward(dout)
        grads.append([x.grad.clone() for x in (q, k, v)])
    print("gradients: relative difference " +
          ", ".join(f"{n} {rel(a, b):.2e}" for n, a, b in zip(("dq", "dk", "dv"), grads[1], grads[0])))

    flops = 4 * B * H * S * S * D * 0.5  # causal: half the score matrix
    with torch.no_grad():
        ms_flex = timed(lambda: compiled(q, k, v, score_mod=score_mod, block_mask=flex_mask), args.repeats)
        ms_ours = timed(lambda: flexjit.attention(q, k, v, **flexjit_call), args.repeats)
    ms_flex_bwd = timed(lambda: compiled(q, k, v, score_mod=score_mod, block_mask=flex_mask).backward(dout),
                        args.repeats) - ms_flex
    ms_ours_bwd = timed(lambda: flexjit.attention(q, k, v, **flexjit_call).backward(dout), args.repeats) - ms_ours
    print(f"forward:  flex_attention {ms_flex:.3f} ms ({flops / ms_flex / 1e9:.0f} TF/s), "
          f"flexjit {ms_ours:.3f} ms ({flops / ms_ours / 1e9:.0f} TF/s)")
    print(f"backward: flex_attention {ms_flex_bwd:.3f} ms ({2.5 * flops / ms_flex_bwd / 1e9:.0f} TF/s), "
          f"flexjit {ms_ours_bwd:.3f} ms ({2.5 * flops / ms_ours_bwd / 1e9:.0f} TF/s) (forward + backward minus forward)")


if __name__ == "__main__":
    main()
