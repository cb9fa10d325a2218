#!/usr/bin/env bash
# (zy6) The half-slab test with its unmasked cases without tables; causal d256 (whose kernel's
# instructions changed by a few address computations) main against the build, both modes, two
# rounds (zy5 had one deterministic round at 0.952x).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zy6}; r=/tmp/zy6r/r; mkdir -p $r $out
save() { (cd /tmp/zy6r && tar czf $out/zy6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/ft_0 timeout 100 ./gpu_test_attention --gtest_filter=BwdGpu.HalfSlabSlicesAtHeadDimsAbove128 > $r/test_halfslab.log 2>&1
echo "test: $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|rror' $r/test_halfslab.log | head -6 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then run=./flexjit_main; else run=./flexjit; fi
    for m in fast deterministic; do
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 40 $run bench --suite head_dims.json --only causal_d256 --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -2 $r/${v}_${m}_$rd.log
    done
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_*_?.jsonl")):
    ver, m, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], m, ver)].append(round(o.get("bwd_tflops", 0), 1))
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in v}):
        a, b = v[(n, m, "old")], v[(n, m, "new")]
        if a and b: print(f"{m:13s} {n:14s} old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f}")
PY
echo "all $(( $(date +%s) - t0 )) s"
save
