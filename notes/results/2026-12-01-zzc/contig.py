"""zzc6: contiguous decode steps, TMA tiles (m16n64w4s3t, the default) against cp.async (m16n64w4s3),
graph-captured GPU time per step (scripts/latency.py's timing), alternating, two rounds."""
import sys, os, json, torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../scripts"))
import latency, flexjit
rows = [(1, 4096), (1, 16384), (4, 8192), (8, 2048), (16, 4096), (32, 2048), (64, 1024), (16, 32768)]
for B, S in rows:
    q = torch.randn(B, 32, 1, 128, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(B, 8, S, 128, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(B, 8, S, 128, device="cuda", dtype=torch.bfloat16)
    lens = torch.full((B,), S, device="cuda", dtype=torch.int32)
    host = [S] * B
    out = {"B": B, "S": S}
    for r in range(2):
        for cfg in ("m16n64w4s3t", "m16n64w4s3"):
            fn = lambda: flexjit.decode(q, k, v, lens, host_seq_lens=host, config=cfg)
            out.setdefault(cfg, []).append(round(latency.timed_graph(fn), 2))
    out["GB/s t"] = round(2 * B * 8 * S * 128 * 2 / (min(out["m16n64w4s3t"]) * 1e3), 0)
    print(json.dumps(out), flush=True)
