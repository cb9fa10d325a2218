# Session (zg): flexjit.decode's body, timed stage by stage in place (perf_counter_ns between the
# stages, summed over 2000 calls), for the contiguous B=1 KV=4k step; then the whole call with the
# garbage collector off, to see whether collections are part of it.
import contextlib, ctypes, gc, json, time
import torch
import flexjit
from flexjit import _lib, _tensors

dev = torch.device("cuda", 0)
B, Hq, Hkv, S, D = 1, 32, 8, 4096, 128
q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
k = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
v = torch.randn_like(k)
lens = torch.full((B,), S, device=dev, dtype=torch.int32)
spent = {}


def staged(q, k_cache, v_cache, seq_lens, max_seq_len):
    t = [time.perf_counter_ns()]
    def mark(name):
        now = time.perf_counter_ns(); spent[name] = spent.get(name, 0) + now - t[0]; t[0] = now
    arrays = [("q", q), ("k_cache", k_cache), ("v_cache", v_cache), ("seq_lens", seq_lens)]
    kinds = {_tensors.framework(x) for _, x in arrays}
    for name, x in (("q", q), ("v_cache", v_cache)):
        if len(x.shape) != 4: raise RuntimeError
    B, Hq, Sq, D = _tensors.shape_of(q)
    Dv = _tensors.shape_of(v_cache)[3]
    gpu = _tensors.is_gpu(q)
    mark("1 frameworks, shapes, is_gpu")
    decls = flexjit._buffer_decls(None)
    pdecls = []
    dtype = _tensors.dtype_name(q)
    variant = flexjit._variant(None, None, decls, pdecls, flexjit._DTYPES[dtype], D, Dv, decode_config=None)
    mark("2 dtype, variant lookup")
    context = torch.cuda.device(q.device)
    with context:
        mark("3 enter torch.cuda.device")
        stream = _tensors.current_stream(q)
        mark("4 current_stream")
        out = _tensors.empty_like(q, (B, Hq, Sq, Dv), dtype)
        lse = _tensors.empty_like(q, (B, Hq, Sq), "float32")
        mark("5 two empty_like")
        ds = {n: _tensors.describe(x, n, stream) for n, x in arrays + [("out", out), ("lse", lse)]}
        mark("6 six describe")
        args = _lib.DecodeArgs.new(q=ds["q"].pointer, k=ds["k_cache"].pointer, v=ds["v_cache"].pointer,
                                   seq_lens=ds["seq_lens"].pointer, out=ds["out"].pointer, lse=ds["lse"].pointer,
                                   max_seq_len=int(max_seq_len))
        mark("7 DecodeArgs.new")
        options = flexjit._call_options(None, None, None, stream)
        lib = _lib.lib()
        mark("8 options, lib")
        _lib.check(lib.flexjit_decode(variant.handle, ctypes.byref(args), ctypes.c_void_p(stream), options.pointer))
        mark("9 the C call")
    mark("10 exit torch.cuda.device")
    out, lse = _tensors.finish(q, out), _tensors.finish(q, lse)
    mark("11 finish")
    return out


N = 2000
for _ in range(50): staged(q, k, v, lens, S)
torch.cuda.synchronize(); spent.clear()
t = time.perf_counter()
for _ in range(N): staged(q, k, v, lens, S)
torch.cuda.synchronize()
total = (time.perf_counter() - t) / N * 1e6
print(json.dumps({"staged decode, per call": round(total, 2)}))
for name, ns in sorted(spent.items(), key=lambda kv: int(kv[0].split()[0])):
    print(json.dumps({"stage": name, "us": round(ns / N / 1e3, 2)}))
for gc_on in (True, False):
    (gc.enable if gc_on else gc.disable)()
    for _ in range(50): flexjit.decode(q, k, v, lens, max_seq_len=S)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(N): flexjit.decode(q, k, v, lens, max_seq_len=S)
    torch.cuda.synchronize()
    print(json.dumps({"flexjit.decode, gc " + ("on" if gc_on else "off"): round((time.perf_counter() - t) / N * 1e6, 2)}))
gc.enable()
print(json.dumps({"gc thresholds": gc.get_threshold(), "gc counts": gc.get_count(), "tracked objects": len(gc.get_objects())}))
