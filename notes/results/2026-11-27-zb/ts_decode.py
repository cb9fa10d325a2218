# Decodes the measurement template's stamps (base-256 digits over dV's row kv_start of each CTA).
import sys, numpy as np, statistics as st
dv = np.load(sys.argv[1])  # [B, Hkv, S, Dv] float32
B, H, S, Dv = dv.shape
n_tiles = int(sys.argv[2]) if len(sys.argv) > 2 else 0
rows = dv[:, :, ::128, :36].reshape(-1, 36)
dig = np.rint(rows).astype(np.int64).reshape(-1, 9, 4)
vals = (dig[:, :, 0] | (dig[:, :, 1] << 8) | (dig[:, :, 2] << 16) | (dig[:, :, 3] << 24)).astype(np.int64)
ts = vals[:, :8]; sm = vals[:, 8]
rel = (ts - ts[:, :1]) % (1 << 32)
def med(x): return float(np.median(x)) / 1000.0
names = ["entry->kv landed", "kv->tile0 Q landed", "tile0 (top0->top1)", "tiles 1..n-2 (top1->top last)", "last tile", "loop end->drained", "epilogue"]
d = np.diff(rel, axis=1) % (1 << 32)
for i, n in enumerate(names): print(f"{n:32} median {med(d[:, i]):8.2f} us  p90 {np.percentile(d[:, i], 90) / 1000:8.2f}")
print(f"{'whole CTA (entry->epilogue end)':32} median {med(rel[:, 7]):8.2f} us")
# gaps on each SM between one CTA's epilogue end and the next CTA's entry
start = ts[:, 0]; end = ts[:, 7]
t0 = start.min()
st_ = (start - t0) % (1 << 32); en = (end - t0) % (1 << 32)
gaps = []
for s in np.unique(sm):
    idx = np.where(sm == s)[0]; o = idx[np.argsort(st_[idx])]
    for a, b in zip(o[:-1], o[1:]): gaps.append(st_[b] - en[a])
gaps = np.array(gaps)
print(f"gap on an SM, one CTA's end -> next entry: median {np.median(gaps)/1000:.2f} us p10 {np.percentile(gaps,10)/1000:.2f} p90 {np.percentile(gaps,90)/1000:.2f} (n={len(gaps)})")
print(f"CTAs {len(sm)}, SMs {len(np.unique(sm))}, span {(en.max())/1000:.1f} us, first wave entries spread {np.sort(st_)[131]/1000:.2f} us")
