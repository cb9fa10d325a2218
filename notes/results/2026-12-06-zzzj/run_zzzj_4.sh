#!/bin/bash
# (zzzj) call 4 (carry .gpu/zzzk4; about 420 s): the m192 default for the table form at d64: GPU
# tests (three shards at once), then forward A/B main / new on table_ab.json (3 rounds) and on
# the issue's suite (2 rounds: the other kernels' parameter block grew, nothing else changed).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzk4}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/fj1 timeout 280 ./gta --gtest_filter='FwdGpu.ScoreDiagonalValues' > $out/tests_a.txt 2>&1; echo "a rc=$?") &
(FLEXJIT_CACHE_DIR=/tmp/fj2 timeout 280 ./gta --gtest_filter='FwdGpu.DiagonalBias*:FwdGpu.DiagonalTable*' > $out/tests_b.txt 2>&1; echo "b rc=$?") &
(FLEXJIT_CACHE_DIR=/tmp/fj3 timeout 280 ./gta --gtest_filter='FwdGpu.ScoreDiagonalValuesOutOfBounds:SeqLensGpu.ScoreDiagonalValuesOfShortSequences:FwdGpu.SuiteMods' > $out/tests_c.txt 2>&1; echo "c rc=$?") &
wait
grep -hE "^\[ +(OK|FAILED) |Failure|error" $out/tests_*.txt | head -30
echo "tests $(( $(date +%s) - t0 )) s"
OUT=$out bash ab2.sh tab table_ab.json fwd_ms 120 3 "--no-bwd" main:./flexjit_main:: new:./flexjit:: 2>&1 | grep -v "^tab "
OUT=$out bash ab2.sh suite suite.json fwd_ms 150 2 "--no-bwd" main:./flexjit_main:: new:./flexjit:: 2>&1 | grep -v "^suite "
echo "all done $(( $(date +%s) - t0 )) s"
