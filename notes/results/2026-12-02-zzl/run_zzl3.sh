#!/bin/bash
# zzl3: compute-sanitizer (memcheck, racecheck, synccheck) on the two new tests, and random problems,
# side by side.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzl3}; r=/tmp/zzl3r/r; mkdir -p $r $out
save() { (cd /tmp/zzl3r && tar czf $out/zzl3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
n=0
for tool in memcheck racecheck synccheck; do
  for t in FwdGpu.OutputGemmSpansOnlyVsColumns BwdGpu.GradientGemmsSpanOnlyTheTensorsColumns; do
    n=$((n+1)); FLEXJIT_CACHE_DIR=/tmp/fcs$n timeout 420 compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter=$t > $r/${tool}_${t}.txt 2>&1 &
  done
done
FLEXJIT_CACHE_DIR=/tmp/fcr1 FLEXJIT_RANDOM_PROBLEMS=8 timeout 420 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.PaddedBatchesForwardAndBackward' > $r/random1.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fcr2 FLEXJIT_RANDOM_PROBLEMS=8 timeout 420 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.RaggedBatchesForwardAndBackward' > $r/random2.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fcr3 FLEXJIT_RANDOM_PROBLEMS=10 timeout 420 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/random3.txt 2>&1 &
wait
echo "all $(( $(date +%s) - t0 )) s"
for f in $r/*.txt; do echo "== $(basename $f): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard|OK \]|FAILED \]|Failure' $f | tail -4 | tr '\n' ' ')"; done
save
