"""zzc1: kernels of one decode step under ncu: flexjit, then SDPA cuDNN and FA2, 3 calls each."""
import sys, os, torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../scripts"))
import latency
calls = []
latency.measure = lambda system, name, fn, extra=None: calls.append((system, name, fn))
latency.decode_problem("decode_b1_kv4k", 1, 32, 8, 4096, 128, 0)
latency.decode_problem("decode_b64_kv1k_paged16", 64, 32, 8, 1024, 128, 16)
for system, name, fn in calls:
    if "device" in system: continue
    for _ in range(3): fn()
    torch.cuda.synchronize()
    print("done", system, name, flush=True)
