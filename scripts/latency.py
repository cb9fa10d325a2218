#!/usr/bin/env python3
"""Per-call latency of small problems, where the host's work can be the cost: decode steps of one
to 64 sequences and a short prefill, through flexjit's Python API and PyTorch's SDPA (cuDNN /
FlashAttention-2 backends, GQA through enable_gqa) on the same tensors.

  FLEXJIT_LIBRARY=build/libflexjit.so PYTHONPATH=python python3 scripts/latency.py > latency.jsonl

For each problem and system: `loop_us`, the wall time per call of 200 back-to-back calls on the
current stream (host work, launches and kernels, whichever binds), and `graph_us`, the time per
call of the same calls captured into one CUDA graph and replayed (the GPU's time alone: what a
serving loop that captures its decode step sees). A system whose call cannot be captured reports
the error instead. No L2 flush: a decode step's cache is read once anyway. With the default
`--layers 1` every call reads the same cache, so a cache smaller than the L2 (B=1 4k: 17 MB) is
read from it; `--layers N` rotates the decode calls over N caches, as a model's N layers would,
so that with N large enough no step finds its cache in the L2.
"""
import argparse
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


def rotating(calls):
    """A call that runs `calls` one after another, in turn (one per layer)."""
    turn = [0]

    def call():
        i = turn[0]
        turn[0] = (i + 1) % len(calls)
        return calls[i]()
    return call


def measure_sdpa(name, extra, q, ks, vs, **kwargs):
    """SDPA's FlashAttention-2 and cuDNN backends on the same tensors (K and V: one per layer)."""
    for backend, label in ((torch.nn.attention.SDPBackend.FLASH_ATTENTION, "SDPA FA2"),
                           (torch.nn.attention.SDPBackend.CUDNN_ATTENTION, "SDPA cuDNN")):
        def sdpa_of(k, v, backend=backend):
            def sdpa():
                with torch.nn.attention.sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, **kwargs)
            return sdpa
        measure(label, name, rotating([sdpa_of(k, v) for k, v in zip(ks, vs)]), extra)


def decode_problem(name, B, Hq, Hkv, S, D, page_size, layers=1):
    dev = "cuda"
    q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
    lens = torch.full((B,), S, device=dev, dtype=torch.int32)
    host_lens = [S] * B
    extra = {"B": B, "Hq": Hq, "Hkv": Hkv, "S": S, "D": D, "page_size": page_size, "layers": layers,
             "bytes_mb": round(2 * B * Hkv * S * D * 2 / 1e6, 2)}
    ks, vs, fj, fj_device = [], [], [], []
    for _ in range(layers):
        k = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
        v = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
        ks.append(k)
        vs.append(v)
        if page_size:
            pages_per_seq = S // page_size
            perm = torch.randperm(B * pages_per_seq, device=dev)
            table = perm.view(B, pages_per_seq).to(torch.int32)
            kp = torch.empty(B * pages_per_seq, page_size, Hkv, D, device=dev, dtype=torch.bfloat16)
            vp = torch.empty_like(kp)
            kp[table.flatten().long()] = k.permute(0, 2, 1, 3).reshape(B * pages_per_seq, page_size, Hkv, D)
            vp[table.flatten().long()] = v.permute(0, 2, 1, 3).reshape(B * pages_per_seq, page_size, Hkv, D)
            host_table = table.cpu().flatten().tolist()
            fj.append(lambda kp=kp, vp=vp, table=table, host_table=host_table: flexjit.decode(
                q, kp, vp, lens, page_table=table, host_seq_lens=host_lens, host_page_table=host_table))
            fj_device.append(lambda kp=kp, vp=vp, table=table: flexjit.decode(
                q, kp, vp, lens, page_table=table, max_seq_len=S))
        else:
            fj.append(lambda k=k, v=v: flexjit.decode(q, k, v, lens, host_seq_lens=host_lens))
            fj_device.append(lambda k=k, v=v: flexjit.decode(q, k, v, lens, max_seq_len=S))
    measure("flexjit", name, rotating(fj), extra)
    measure("flexjit (device lengths only)", name, rotating(fj_device), extra)
    measure_sdpa(name, extra, q, ks, vs, enable_gqa=True)


def prefill_problem(name, B, H, S, D):
    dev = "cuda"
    q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16) for _ in range(3))
    extra = {"B": B, "H": H, "S": S, "D": D}
    measure("flexjit", name, lambda: flexjit.attention(q, k, v, mask_mod="q_idx >= kv_idx"), extra)
    measure_sdpa(name, extra, q, [k], [v], is_causal=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=1,
                        help="rotate each decode problem's calls over this many caches (default 1: one cache)")
    args = parser.parse_args()
    if args.layers < 1:
        parser.error(f"--layers must be at least 1, got {args.layers}")
    print(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                      "flexjit": flexjit.library_version(), "layers": args.layers}), flush=True)
    decode_problem("decode_b1_kv4k", 1, 32, 8, 4096, 128, 0, args.layers)
    decode_problem("decode_b1_kv4k_paged16", 1, 32, 8, 4096, 128, 16, args.layers)
    decode_problem("decode_b8_kv2k_paged64", 8, 32, 8, 2048, 128, 64, args.layers)
    decode_problem("decode_b64_kv1k_paged16", 64, 32, 8, 1024, 128, 16, args.layers)
    prefill_problem("prefill_causal_b1_h8_s512", 1, 8, 512, 128)
    return 0


if __name__ == "__main__":
    sys.exit(main())
