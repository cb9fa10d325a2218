#!/bin/bash
# (zzzl) call 1 (carry .gpu/zzzl; about 520 s): the dK/dV kernel seeding Sᵀ from the diagonal
# table's pairs. GPU tests (two shards at once) and compute-sanitizer memcheck / synccheck /
# racecheck of BwdGpu.DiagonalTableOnePerHeadDim, all at once; then the backward A/B main / new on
# table_bwd.json (alternating arms, 2 rounds).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzl1}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $out/gpu.txt
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/fj1 timeout 250 ./gta --gtest_filter='BwdGpu.ScoreDiagonalValues' > $out/tests_a.txt 2>&1; echo "a rc=$?") &
(FLEXJIT_CACHE_DIR=/tmp/fj2 timeout 250 ./gta --gtest_filter='BwdGpu.ScoreDiagonalSeedHeldValueTakesTheExactPath:BwdGpu.DiagonalTableOnePerHeadDim:BwdGpu.ScoreDiagonalValuesOutOfBounds:FwdGpu.DiagonalTable*:FwdGpu.ScoreDiagonalValues:SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > $out/tests_b.txt 2>&1; echo "b rc=$?") &
for tool in memcheck synccheck racecheck; do
  (FLEXJIT_CACHE_DIR=/tmp/fjs_$tool timeout 250 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 30 \
     ./gta --gtest_filter='BwdGpu.DiagonalTableOnePerHeadDim' > $out/san_$tool.txt 2>&1; echo "$tool rc=$?") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests_*.txt | head -30
grep -hE "ERROR SUMMARY|RACECHECK SUMMARY|^\[ +(OK|FAILED) " $out/san_*.txt
echo "tests $(( $(date +%s) - t0 )) s"
OUT=$out bash ab2.sh bwd table_bwd.json bwd_ms 230 2 "" main:./flexjit_main:: new:./flexjit:: 2>&1 | grep -v "^bwd "
echo "all done $(( $(date +%s) - t0 )) s"
