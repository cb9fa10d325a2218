#!/usr/bin/env bash
# (zzzn) call 3: full-tile-grad's landing form (whole tiles without dSᵀ's select only under masks
# with tile bounds; nvdisasm: the documents and soft-capping kernels' SASS is main's again, every
# other kernel compared is the same as the branch zzzm4 and zzzn1 timed and tested):
#  the backward GPU tests in five processes side by side (zzzm4's, cut to fit the session's last
#  300 s of device time).
# .gpu/zzzn3: flexjit and gta (landing build, stripped), flexjit_main, ab2.sh, ab.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzn3}; r=/tmp/zzzn3r/r; mkdir -p $r $out
save() { (cd /tmp/zzzn3r && tar czf $out/zzzn3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in 'BwdGpu.SuiteMods' 'BwdGpu.ScoreModsWithConstantFactors' \
         'SeqLensGpu.WarpSpecializedBackward:BwdGpu.OddLengthsAndDifferentLengths' \
         'RandomProblemsGpu.*' 'BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim'; do
  i=$((i + 1))
  (FLEXJIT_CACHE_DIR=/tmp/fj_t$i timeout 150 ./gta --gtest_filter="$f" > $r/tests_$i.txt 2>&1; echo "tests $i rc=$? $(( $(date +%s) - t0 )) s") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST" $r/tests_*.txt | head -40
save
echo "all $(( $(date +%s) - t0 )) s"
save
