#!/usr/bin/env bash
# (zzzn) call 3: full-tile-grad's landing form (whole tiles without dSᵀ's select only under masks
# with tile bounds; nvdisasm: the documents and soft-capping kernels' SASS is main's again, every
# other kernel compared is the same as the branch zzzm4 and zzzn1 timed and tested):
#  1. the backward GPU tests in five processes side by side (as zzzm4);
#  2. if time is left (the session's device time is short): one round of the deterministic A/B.
# .gpu/zzzn3: flexjit and gta (landing build, stripped), flexjit_main, ab2.sh, ab.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzn3}; r=/tmp/zzzn3r/r; mkdir -p $r $out
save() { (cd /tmp/zzzn3r && tar czf $out/zzzn3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in 'BwdGpu.SuiteMods:SeqLensGpu.WarpSpecializedOrderedBackward' \
         'NanGpu.*:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.OddLengthsAndDifferentLengths:SeqLensGpu.WarpSpecializedBackward' \
         'BwdGpu.FastAndDeterministicModes' 'BwdGpu.ScoreModsWithConstantFactors:BwdGpu.FastModeOnePerHeadDim' \
         'RandomProblemsGpu.*:BwdGpu.OrderedModeOnePerHeadDim'; do
  i=$((i + 1))
  (FLEXJIT_CACHE_DIR=/tmp/fj_t$i timeout 250 ./gta --gtest_filter="$f" > $r/tests_$i.txt 2>&1; echo "tests $i rc=$? $(( $(date +%s) - t0 )) s") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST" $r/tests_*.txt | head -40
save
[ $(( $(date +%s) - t0 )) -lt 200 ] && OUT=$r bash ab2.sh detab ab.json bwd_ms 30 1 "--bwd-mode deterministic" main:./flexjit_main:: land:./flexjit:: 2>&1 | grep -v "^detab "
echo "all $(( $(date +%s) - t0 )) s"
save
