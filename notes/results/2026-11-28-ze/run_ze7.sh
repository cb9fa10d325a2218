#!/usr/bin/env bash
# Session (ze) ze7: the landing build (first stores without GQA; tests with non-GQA d128 cases):
# the tests that cover the first stores and GQA, compute-sanitizer on FastModeOnePerHeadDim (now
# with a non-GQA d128 case), and GQA / documents against main + memo (two rounds).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ze7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 110 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.Gqa8To1AndBshd:BwdGpu.TuningLaunchesLeaveNoDqBehind' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E "^\[       OK|FAILED|Failure" $r/tests.txt | head -12
for tool in memcheck racecheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 30 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
done
export FLEXJIT_AUTOTUNE=off
for i in 1 2; do for b in flexjit_base flexjit; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$b timeout 30 ./$b bench --suite suite.json --only gqa_causal_d128,document_causal_d128 --bwd-mode fast 2>/dev/null | grep '"name"' | python3 -c "
import sys, json
for l in sys.stdin:
    o = json.loads(l); print('$b', o['name'], o['bwd_tflops'])"
done; done | tee $r/ab.txt
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf ze7.tar.gz r && rm -rf r
