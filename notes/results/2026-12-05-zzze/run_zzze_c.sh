#!/bin/bash
# (zzze) prepared, not run. Call C (carry .gpu/zzze; about 150 s): the dK/dV kernel's fixed cost
# per CTA. main's flexjit benches c0_suite.json (Skv 4096 fixed, so 2048 CTAs in 15.5 waves; Sq
# from 128 to 4096, so 2 to 64 query tiles per CTA; d128 and d64; two problems at Skv 2048), three
# rounds. The fit of the backward's time against the tiles per CTA: the intercept per wave is
# c0, the slope t (c0.txt).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzec}; r=/tmp/zzzecr/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_c0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for n in 1 2 3; do
  timeout 200 ./flexjit_main bench --json $r/c0_$n.jsonl --suite c0_suite.json > $r/c0_$n.log 2>&1
  echo "round $n rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/c0.txt
import json, sys, glob, statistics as st
r = sys.argv[1]; t = {}
for f in glob.glob(f"{r}/c0_*.jsonl"):
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault(o["name"], []).append(o["bwd_ms"])
for d in (128, 64):
    pts = [(sq // 64, st.median(t[f"c0_noop_d{d}_sq{sq}"])) for sq in (128, 256, 512, 1024, 2048, 4096) if f"c0_noop_d{d}_sq{sq}" in t]
    if len(pts) < 2: continue
    n = len(pts); mx = sum(x for x, _ in pts) / n; my = sum(y for _, y in pts) / n
    slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts); icpt = my - slope * mx
    print(f"d{d}: " + " ".join(f"{x}:{y:.4f}" for x, y in pts) + f" | ms = {icpt:.4f} + {slope:.5f} * tiles -> c0 = {icpt / slope:.2f} tiles")
for k in sorted(t): print(k, " ".join(f"{x:.4f}" for x in t[k]))
PY
(cd /tmp/zzzecr && tar czf $out/zzzec.tar.gz r); echo "done $(( $(date +%s) - t0 )) s"
