# Session (zg): where a small call's host time goes, piece by piece (µs per call, 2000 calls, best
# of 3): the Python wrapper's steps one at a time, the C call alone with prepared arguments, and
# SDPA beside it; then a document-masked prefill, whose mask reads a buffer and so is rebuilt per
# call, against the same call with a block mask built once.
import ctypes, json, time
import torch
import torch.nn.functional as F
import flexjit
from flexjit import _lib, _tensors

N = 2000


def per_call(fn, n=N):
    for _ in range(50): fn()
    torch.cuda.synchronize()
    best = None
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n): fn()
        torch.cuda.synchronize()
        us = (time.perf_counter() - t) / n * 1e6
        best = us if best is None else min(best, us)
    return round(best, 2)


def row(name, fn, n=N):
    try:
        print(json.dumps({"piece": name, "us": per_call(fn, n)}), flush=True)
    except Exception as e:  # noqa: BLE001 - reported
        print(json.dumps({"piece": name, "error": f"{type(e).__name__}: {e}"[:300]}), flush=True)


dev = torch.device("cuda", 0)
B, Hq, Hkv, S, D = 1, 32, 8, 4096, 128
q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
k = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
v = torch.randn_like(k)
lens = torch.full((B,), S, device=dev, dtype=torch.int32)
row("decode: the whole call (device lengths, max_seq_len)", lambda: flexjit.decode(q, k, v, lens, max_seq_len=S))
row("SDPA cuDNN decode (enable_gqa)", lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
row("torch.cuda.device(q.device) enter+exit", lambda: torch.cuda.device(q.device).__enter__() and None)
def ctx():
    with torch.cuda.device(q.device):
        pass
row("with torch.cuda.device(q.device)", ctx)
row("torch.cuda.current_stream(q.device).cuda_stream", lambda: torch.cuda.current_stream(q.device).cuda_stream)
row("torch.cuda.current_stream().cuda_stream", lambda: torch.cuda.current_stream().cuda_stream)
row("torch._C._cuda_getCurrentRawStream(0)", lambda: torch._C._cuda_getCurrentRawStream(0))
row("torch.empty out", lambda: torch.empty((B, Hq, 1, D), dtype=torch.bfloat16, device=q.device))
row("q.new_empty out", lambda: q.new_empty((B, Hq, 1, D)))
row("_tensors.describe(q)", lambda: _tensors.describe(q, "q", 0))
row("q.data_ptr(); q.shape; q.stride()", lambda: (q.data_ptr(), tuple(q.shape), q.stride()))
row("q.device.type; q.device.index", lambda: (q.device.type, q.device.index))
row("_tensors.framework/is_gpu/dtype_name(q)", lambda: (_tensors.framework(q), _tensors.is_gpu(q), _tensors.dtype_name(q)))
row("flexjit._variant lookup", lambda: flexjit._variant(None, None, [], [], _lib.BF16, D, D))
row("flexjit._call_options plain", lambda: flexjit._call_options(None, None, None, 0))
stream = torch.cuda.current_stream().cuda_stream
out = torch.empty((B, Hq, 1, D), dtype=torch.bfloat16, device=dev)
lse = torch.empty((B, Hq, 1), dtype=torch.float32, device=dev)
ds = {n: _tensors.describe(x, n, stream) for n, x in (("q", q), ("k", k), ("v", v), ("lens", lens), ("out", out), ("lse", lse))}
row("DecodeArgs.new", lambda: _lib.DecodeArgs.new(q=ds["q"].pointer, k=ds["k"].pointer, v=ds["v"].pointer,
                                                  seq_lens=ds["lens"].pointer, out=ds["out"].pointer,
                                                  lse=ds["lse"].pointer, max_seq_len=S))
args = _lib.DecodeArgs.new(q=ds["q"].pointer, k=ds["k"].pointer, v=ds["v"].pointer, seq_lens=ds["lens"].pointer,
                           out=ds["out"].pointer, lse=ds["lse"].pointer, max_seq_len=S)
variant = flexjit._variant(None, None, [], [], _lib.BF16, D, D)
options = flexjit._call_options(None, None, None, stream)
lib = _lib.lib()
row("C call alone: lib.flexjit_decode(prepared)", lambda: lib.flexjit_decode(variant.handle, ctypes.byref(args),
                                                                             ctypes.c_void_p(stream), options.pointer))
row("C call + _lib.check", lambda: _lib.check(lib.flexjit_decode(variant.handle, ctypes.byref(args),
                                                                 ctypes.c_void_p(stream), options.pointer)))
row("ctypes call of flexjit_last_error (a C call's floor)", lambda: lib.flexjit_last_error())

# Prefill, causal (a cached automatic block mask) and documents (a buffer mask: rebuilt per call).
qp, kp, vp = (torch.randn(1, 8, 512, 128, device=dev, dtype=torch.bfloat16) for _ in range(3))
doc = (torch.arange(512, device=dev, dtype=torch.int32) // 100).contiguous()
row("prefill causal S=512: whole call", lambda: flexjit.attention(qp, kp, vp, mask_mod="q_idx >= kv_idx"), 500)
docs = "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"
row("prefill documents S=512: whole call (mask rebuilt per call)",
    lambda: flexjit.attention(qp, kp, vp, mask_mod=docs, buffers={"doc": doc}), 500)
bm = flexjit.block_mask(docs, 1, 8, 512, 512, buffers={"doc": doc}, device="cuda")
row("prefill documents S=512: with a block mask built once",
    lambda: flexjit.attention(qp, kp, vp, mask_mod=docs, buffers={"doc": doc}, block_mask=bm), 500)
row("flexjit.block_mask documents S=512 (build + drop)",
    lambda: flexjit.block_mask(docs, 1, 8, 512, 512, buffers={"doc": doc}, device="cuda"), 500)
row("SDPA cuDNN prefill causal S=512", lambda: F.scaled_dot_product_attention(qp, kp, vp, is_causal=True), 500)
# Does the per-call mask capture into a CUDA graph?
try:
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        flexjit.attention(qp, kp, vp, mask_mod=docs, buffers={"doc": doc})
    torch.cuda.current_stream().wait_stream(s); torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        o = flexjit.attention(qp, kp, vp, mask_mod=docs, buffers={"doc": doc})
    g.replay(); torch.cuda.synchronize()
    print(json.dumps({"piece": "documents prefill captured into a CUDA graph", "ok": True}), flush=True)
except Exception as e:  # noqa: BLE001
    print(json.dumps({"piece": "documents prefill captured into a CUDA graph", "error": f"{type(e).__name__}: {e}"[:400]}), flush=True)
