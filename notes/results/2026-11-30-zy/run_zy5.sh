#!/usr/bin/env bash
# (zy5) The landing call for half-slab slices (192-column dK/dV tiles; the ordered sums without a
# mask or score_mod keep 256): tests, then main (flexjit_main) against the build on mla.json and
# head_dims.json's d160 / d192 / d256 rows (fast two rounds, deterministic one), then the peers on
# the same problems, in one call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zy5}; r=/tmp/zy5r/r; mkdir -p $r $out
save() { (cd /tmp/zy5r && tar czf $out/zy5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
i=0
for f in BwdGpu.HalfSlabSlicesAtHeadDimsAbove128 BwdGpu.OrderedModeOnePerHeadDim BwdGpu.FastModeOnePerHeadDim BwdGpu.HeadDimsThatAreNoMultipleOf64; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 200 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
wait
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|rror' $f | head -6 | tr '\n' ' ')"; done
echo "tests $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
HD=causal_d160,causal_d192,causal_d256
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then run=./flexjit_main; else run=./flexjit; fi
    for m in fast deterministic; do
      [ $rd = 2 ] && [ $m = deterministic ] && continue
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $run bench --suite mla.json --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.log
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $run bench --suite head_dims.json --only $HD --bwd-mode $m --json $r/${v}_${m}_$rd.hd.jsonl > $r/${v}_${m}_$rd.hd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.hd.log
    done
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list); fw = collections.defaultdict(list); cfg = {}
for f in sorted(glob.glob(r + "/*_*_?.jsonl")) + sorted(glob.glob(r + "/*_*_?.hd.jsonl")):
    ver, m, rd = f.split("/")[-1].split(".")[0].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            v[(o["name"], m, ver)].append(round(o.get("bwd_tflops", 0), 1)); fw[(o["name"], m, ver)].append(round(o.get("fwd_tflops", 0), 1))
            cfg[(o["name"], m, ver)] = o.get("bwd_configs")
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in v}):
        a, b = v[(n, m, "old")], v[(n, m, "new")]
        if a and b: print(f"{m:13s} {n:20s} bwd old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f} fwd {fw[(n,m,'new')]} {cfg[(n,m,'new')]}")
PY
echo "A/B $(( $(date +%s) - t0 )) s"
save
left=$(( 540 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite mla.json --only mla_causal,mla_noop,mla_gqa_causal,mla_sliding_window > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite head_dims.json --only causal_d160,causal_d192 >> $r/peers.jsonl 2>> $r/peers.err || tail -3 $r/peers.err
python3 - $r <<'PY'
import json, sys
for line in open(sys.argv[1] + "/peers.jsonl"):
    try: o = json.loads(line)
    except Exception: continue
    if "name" in o: print(o["name"], o.get("system"), round(o.get("fwd_tflops") or 0, 1), round(o.get("bwd_tflops") or 0, 1))
PY
echo "all $(( $(date +%s) - t0 )) s"
save
