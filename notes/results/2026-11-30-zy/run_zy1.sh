#!/usr/bin/env bash
# (zy1) Half-slab slices: the warp-specialised dK/dV kernel on 192-column tiles at head dims
# 129-192 (slices of 96 = 64 + 32 columns) against main's 256-column tiles. Tests first (the
# head-dim tests, both modes), memcheck on the slab test, then the A/B on mla_stages.json (fast and
# deterministic), one round each order.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zy1}; r=/tmp/zy1r/r; mkdir -p $r $out
save() { (cd /tmp/zy1r && tar czf $out/zy1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
i=0
for f in BwdGpu.TilesWithAWholeSlabPastTheHeadDim BwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.HeadDimsAndHalfPrecision \
         BwdGpu.DeterministicModeSumsDqInOrder SeqLensGpu.HeadDimsThatAreNoMultipleOf64; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 240 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
FLEXJIT_RANDOM_PROBLEMS=12 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 240 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
(FLEXJIT_CACHE_DIR=/tmp/ft_m timeout 260 compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.TilesWithAWholeSlabPastTheHeadDim > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')" > $r/memcheck.txt) &
wait
cat $r/memcheck.txt
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|rror' $f | head -6 | tr '\n' ' ')"; done
echo "tests $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then run=./flexjit_main; else run=./flexjit; fi
    for m in fast deterministic; do
      [ $rd = 2 ] && [ $m = deterministic ] && continue
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $run bench --suite mla_stages.json --bwd-mode $m --json $r/${v}_${m}_$rd.jsonl > $r/${v}_${m}_$rd.log 2>&1 || tail -3 $r/${v}_${m}_$rd.log
    done
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list); cfg = {}
for f in sorted(glob.glob(r + "/*_*_?.jsonl")):
    ver, m, rd = f.split("/")[-1][:-6].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], m, ver)].append(round(o.get("bwd_tflops", 0), 1)); cfg[(o["name"], m, ver)] = o.get("bwd_configs")
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in v}):
        a, b = v[(n, m, "old")], v[(n, m, "new")]
        if a and b: print(f"{m:13s} {n:22s} old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f} {cfg[(n,m,'new')]}")
PY
echo "all $(( $(date +%s) - t0 )) s"
save
