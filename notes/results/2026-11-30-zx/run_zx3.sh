#!/usr/bin/env bash
# (zx3) The pairs' exchange moves no data for a dQ piece wholly past the tensor's columns (GQA 8:1
# and more, fast mode): templates_new (working tree) against templates_old (main, 3708090), one
# binary. Stage .gpu/zx3: flexjit, gpu_test_attention, templates_old/, templates_new/,
# pairs_past_io.json; carry .gpu/zx3; run `bash .gpu/zx3/run_zx3.sh`.
# 1. the new test (MLA 192/128, 64/256, 192/64 with GQA 8:1 and 2:1, both modes), the random
#    any-head-dim draws and memcheck on the new test, at once; 2. A/B, fast, two rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zx3}; r=/tmp/zx3r/r; mkdir -p $r $out
save() { (cd /tmp/zx3r && tar czf $out/zx3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt
t0=$(date +%s)
NEW="FLEXJIT_TEMPLATE_DIR=$PWD/templates_new"
OLD="FLEXJIT_TEMPLATE_DIR=$PWD/templates_old"
env $NEW FLEXJIT_CACHE_DIR=/tmp/ft_0 timeout 240 ./gpu_test_attention --gtest_filter=BwdGpu.TilesWithAWholeSlabPastTheHeadDim > $r/test_slab.log 2>&1 &
env $NEW FLEXJIT_RANDOM_PROBLEMS=16 FLEXJIT_CACHE_DIR=/tmp/ft_r timeout 240 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/test_any.log 2>&1 &
(env $NEW FLEXJIT_CACHE_DIR=/tmp/ft_m timeout 260 compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.TilesWithAWholeSlabPastTheHeadDim > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')" > $r/memcheck.txt) &
wait
cat $r/memcheck.txt
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|tests? from .* ran' $f | head -4 | tr '\n' ' ')"; done
echo "tests $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off
for rd in 1 2; do
  for v in old new; do
    [ $rd = 2 ] && v=$([ $v = old ] && echo new || echo old)
    e=$OLD; [ $v = new ] && e=$NEW
    env $e FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./flexjit bench --suite pairs_past_io.json --json $r/${v}_fast_$rd.jsonl > $r/${v}_fast_$rd.log 2>&1 || tail -3 $r/${v}_fast_$rd.log
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
        if "name" in o: v[(o["name"], ver)].append(round(o.get("bwd_tflops", 0), 1)); cfg[o["name"]] = (o.get("bwd_configs"), o.get("bwd_mode"))
for n in sorted({k[0] for k in v}):
    a, b = v[(n, "old")], v[(n, "new")]
    if a and b: print(f"{n:22s} old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f} {cfg[n]}")
PY
echo "all $(( $(date +%s) - t0 )) s"
save
