#!/usr/bin/env bash
# (zzzm) call 4 (carry .gpu/zzzm4): whole tiles of masked kernels without dSᵀ's select (branch
# full-tile-grad, 78c535c: the identity score_mod and every other whose derivative is a constant):
# the A/B main / branch on six masked rows (whole backward, 2 rounds), then the branch's backward
# GPU tests in five processes side by side (timeouts fitted to the little budget left).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzm4}; r=/tmp/zzzm4r/r; mkdir -p $r $out
save() { (cd /tmp/zzzm4r && tar czf $out/zzzm4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
OUT=$r bash ab2.sh gradab ab.json bwd_ms 50 2 "" main:./flexjit_main:: whole:./flexjit:: 2>&1 | grep -v "^gradab "
echo "A/B $(( $(date +%s) - t0 )) s"
save
i=0
for f in 'BwdGpu.SuiteMods' 'NanGpu.*:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.OddLengthsAndDifferentLengths' \
         'SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.WarpSpecializedOrderedBackward' \
         'BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.ScoreModsWithConstantFactors' 'RandomProblemsGpu.*'; do
  i=$((i + 1))
  (FLEXJIT_CACHE_DIR=/tmp/fj_t$i timeout 110 ./gta --gtest_filter="$f" > $r/tests_$i.txt 2>&1; echo "tests $i rc=$? $(( $(date +%s) - t0 )) s") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST" $r/tests_*.txt | head -40
echo "all $(( $(date +%s) - t0 )) s"
save
