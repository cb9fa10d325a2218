#!/usr/bin/env python3
"""Per-call latency of small problems, where the host's work can be the cost: decode steps of one
to 64 sequences and a short prefill, through flexjit's Python API and PyTorch's SDPA (cuDNN /
FlashAttention-2 backends, GQA through enable_gqa) on the same tensors.

  FLEXJIT_LIBRARY=build/libflexjit.so PYTHONPATH=python python3 scripts/latency.py > latency.jsonl

For each problem and system: `loop_us`, the wall time per call of 200 back-to-back calls on the
current stream (host work, launches and kernels, whichever binds), and `graph_us`, the time per
call of the same calls captured into one CUDA graph and replayed (the GPU's time alone: what a
serving loop that captures its decode step sees). A system whose call cannot be captured reports
the error instead. No L2 flush: a decode step's cache is read once anyway, and these problems fit
in L2, as they do in a serving loop that runs layer after layer.
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

import flexjit

CALLS = 200


def timed_loop(fn):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(CALLS):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / CALLS * 1e6


def timed_graph(fn):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(20):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        graph.replay()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) * 1e3 / (10 * 20)


def measure(system, name, fn, extra=None):
    row = {"system": system, "name": name}
    row.update(extra or {})
    try:
        row["loop_us"] = round(timed_loop(fn), 1)
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        row["loop_error"] = f"{type(e).__name__}: {e}"[:300]
    try:
        row["graph_us"] = round(timed_graph(fn), 1)
    except Exception as e:  # noqa: BLE001
        row["graph_error"] = f"{type(e).__name__}: {e}"[:300]
        torch.cuda.synchronize()
    print(json.dumps(row), flush=True)


def measure_sdpa(name, extra, q, k, v, **kwargs):
    """SDPA's FlashAttention-2 and cuDNN backends on the same tensors."""
    for backend, label in ((torch.nn.attention.SDPBackend.FLASH_ATTENTION, "SDPA FA2"),
                           (torch.nn.attention.SDPBackend.CUDNN_ATTENTION, "SDPA cuDNN")):
        def sdpa(backend=backend):
            with torch.nn.attention.sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, **kwargs)
        measure(label, name, sdpa, extra)


def decode_problem(name, B, Hq, Hkv, S, D, page_size):
    dev = "cuda"
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
    k = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
    v = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
    lens = torch.full((B,), S, device=dev, dtype=torch.int32)
    host_lens = [S] * B
    extra = {"B": B, "Hq": Hq, "Hkv": Hkv, "S": S, "D": D, "page_size": page_size,
             "bytes_mb": round(2 * B * Hkv * S * D * 2 / 1e6, 2)}
    if page_size:
        pages_per_seq = S // page_size
        perm = torch.randperm(B * pages_per_seq, device=dev)
        table = perm.view(B, pages_per_seq).to(torch.int32)
        kp = torch.empty(B * pages_per_seq, page_size, Hkv, D, device=dev, dtype=torch.bfloat16)
        vp = torch.empty_like(kp)
        kp[table.flatten().long()] = k.permute(0, 2, 1, 3).reshape(B * pages_per_seq, page_size, Hkv, D)
        vp[table.flatten().long()] = v.permute(0, 2, 1, 3).reshape(B * pages_per_seq, page_size, Hkv, D)
        host_table = table.cpu().flatten().tolist()
        fj = lambda: flexjit.decode(q, kp, vp, lens, page_table=table, host_seq_lens=host_lens,
                                    host_page_table=host_table)
        fj_device = lambda: flexjit.decode(q, kp, vp, lens, page_table=table, max_seq_len=S)
    else:
        fj = lambda: flexjit.decode(q, k, v, lens, host_seq_lens=host_lens)
        fj_device = lambda: flexjit.decode(q, k, v, lens, max_seq_len=S)
    measure("flexjit", name, fj, extra)
    measure("flexjit (device lengths only)", name, fj_device, extra)
    measure_sdpa(name, extra, q, k, v, enable_gqa=True)


def prefill_problem(name, B, H, S, D):
    dev = "cuda"
    q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
    extra = {"B": B, "H": H, "S": S, "D": D}
    measure("flexjit", name, lambda: flexjit.attention(q, k, v, mask_mod="q_idx >= kv_idx"), extra)
    measure_sdpa(name, extra, q, k, v, is_causal=True)


def main():
    print(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "flexjit": flexjit.library_version()}), flush=True)
    decode_problem("decode_b1_kv4k", 1, 32, 8, 4096, 128, 0)
    decode_problem("decode_b1_kv4k_paged16", 1, 32, 8, 4096, 128, 16)
    decode_problem("decode_b8_kv2k_paged64", 8, 32, 8, 2048, 128, 64)
    decode_problem("decode_b64_kv1k_paged16", 64, 32, 8, 1024, 128, 16)
    prefill_problem("prefill_causal_b1_h8_s512", 1, 8, 512, 128)
    return 0


if __name__ == "__main__":
    sys.exit(main())
