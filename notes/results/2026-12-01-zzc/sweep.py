"""zzc1: flexjit's decode rows of scripts/latency.py alone (for a FLEXJIT_DECODE_SPLITS sweep: the
variable is read once per process)."""
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../scripts"))
import latency
latency.measure_sdpa = lambda *a, **k: None
_measure = latency.measure
latency.measure = lambda system, name, fn, extra=None: _measure(system, name, fn, dict(extra or {}, splits=os.environ.get("FLEXJIT_DECODE_SPLITS", "auto"))) if system == "flexjit" else None
latency.decode_problem("decode_b1_kv4k", 1, 32, 8, 4096, 128, 0)
latency.decode_problem("decode_b1_kv4k_paged16", 1, 32, 8, 4096, 128, 16)
latency.decode_problem("decode_b64_kv1k_paged16", 64, 32, 8, 1024, 128, 16)
latency.decode_problem("decode_b8_kv2k_paged64", 8, 32, 8, 2048, 128, 64)
