"""zzc3: flexjit's rows of scripts/latency.py (graph-captured GPU time), contiguous twins of the paged rows too."""
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../scripts"))
import latency
latency.measure_sdpa = lambda *a, **k: None
_measure = latency.measure
latency.measure = lambda system, name, fn, extra=None: _measure(system, name, fn, extra) if system == "flexjit" else None
for args in [("decode_b1_kv4k", 1, 32, 8, 4096, 128, 0), ("decode_b1_kv4k_paged16", 1, 32, 8, 4096, 128, 16),
             ("decode_b8_kv2k_paged64", 8, 32, 8, 2048, 128, 64), ("decode_b8_kv2k", 8, 32, 8, 2048, 128, 0),
             ("decode_b64_kv1k_paged16", 64, 32, 8, 1024, 128, 16), ("decode_b64_kv1k", 64, 32, 8, 1024, 128, 0)]:
    latency.decode_problem(*args)
