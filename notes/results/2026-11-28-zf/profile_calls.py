# Session (zf): where flexjit's per-call host time goes (Python wrapper against the C call), decode
# and a short prefill; cProfile of 200 calls each plus the C entry points timed alone.
import cProfile, pstats, time, io, sys
import torch
import flexjit
from flexjit import _lib

lib = _lib.lib()
spent = {}
def timed(name):
    real = getattr(lib, name)
    def wrapper(*a):
        t = time.perf_counter()
        r = real(*a)
        spent[name] = spent.get(name, 0.0) + time.perf_counter() - t
        return r
    wrapper.argtypes = getattr(real, "argtypes", None)
    setattr(lib, name, wrapper)
for n in ("flexjit_decode", "flexjit_forward", "flexjit_block_mask_new", "flexjit_variant_new"):
    if hasattr(lib, n):
        timed(n)

dev = "cuda"
B, Hq, Hkv, S, D = 1, 32, 8, 4096, 128
q = torch.randn(B, Hq, 1, D, device=dev, dtype=torch.bfloat16)
k = torch.randn(B, Hkv, S, D, device=dev, dtype=torch.bfloat16)
v = torch.randn_like(k)
lens = torch.full((B,), S, device=dev, dtype=torch.int32)
qp, kp, vp = (torch.randn(1, 8, 512, 128, device=dev, dtype=torch.bfloat16) for _ in range(3))
cases = {
    "decode": lambda: flexjit.decode(q, k, v, lens, max_seq_len=S),
    "prefill": lambda: flexjit.attention(qp, kp, vp, mask_mod="q_idx >= kv_idx"),
}
for name, fn in cases.items():
    for _ in range(20): fn()
    torch.cuda.synchronize()
    spent.clear()
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    for _ in range(200): fn()
    prof.disable()
    torch.cuda.synchronize()
    total = (time.perf_counter() - t) / 200 * 1e6
    print(f"== {name}: {total:.1f} us per call (under cProfile); C entry points per call: " +
          ", ".join(f"{k} {v / 200 * 1e6:.1f} us" for k, v in spent.items()))
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(18)
    print("\n".join(s.getvalue().splitlines()[:40]))
