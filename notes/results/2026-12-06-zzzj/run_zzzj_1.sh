#!/bin/bash
# (zzzj) call 1 (carry .gpu/zzzk): the table form's GPU tests (three shards at once), then the
# forward A/B main / table on table_ab.json (alternating arms, 3 rounds). About 400 s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzk}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(FLEXJIT_CACHE_DIR=/tmp/fj1 timeout 280 ./gta --gtest_filter='FwdGpu.ScoreDiagonalValues' > $out/tests_a.txt 2>&1; echo "a rc=$?") &
(FLEXJIT_CACHE_DIR=/tmp/fj2 timeout 280 ./gta --gtest_filter='FwdGpu.DiagonalBias*:FwdGpu.DiagonalTable*' > $out/tests_b.txt 2>&1; echo "b rc=$?") &
(FLEXJIT_CACHE_DIR=/tmp/fj3 timeout 280 ./gta --gtest_filter='FwdGpu.ScoreDiagonalValuesOutOfBounds:FwdGpu.ScoreDiagonalValuesBesideMaskColumnsOutOfBounds:SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > $out/tests_c.txt 2>&1; echo "c rc=$?") &
wait
grep -hE "^\[ +(OK|FAILED) |Failure|error" $out/tests_*.txt | head -30
echo "tests $(( $(date +%s) - t0 )) s"
OUT=$out bash ab2.sh tab table_ab.json fwd_ms 220 3 "--no-bwd" main:./flexjit_main:: table:./flexjit:: 2>&1 | grep -v "^tab "
echo "all done $(( $(date +%s) - t0 )) s"
