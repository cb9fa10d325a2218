#!/bin/bash
# (zzzj) call 5 (carry .gpu/zzzk5; about 450 s): the dK/dV kernel's diagonal table. GPU tests (two
# shards at once), compute-sanitizer memcheck of small table-form calls (forward and backward),
# then the backward A/B main / new on table_bwd.json (alternating arms, 2 rounds).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzk5}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/fj1 timeout 260 ./gta --gtest_filter='BwdGpu.ScoreDiagonalValues' > $out/tests_a.txt 2>&1; echo "a rc=$?") &
(FLEXJIT_CACHE_DIR=/tmp/fj2 timeout 260 ./gta --gtest_filter='BwdGpu.ScoreDiagonalValuesOutOfBounds:FwdGpu.DiagonalTable*:SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > $out/tests_b.txt 2>&1; echo "b rc=$?") &
wait
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests_*.txt | head -30
echo "tests $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fjm timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./flexjit bench --suite memcheck_small.json > $out/memcheck.txt 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "ERROR SUMMARY|t5_small|relh_small" $out/memcheck.txt | head -5
OUT=$out bash ab2.sh bwd table_bwd.json bwd_ms 200 2 "" main:./flexjit_main:: new:./flexjit:: 2>&1 | grep -v "^bwd "
echo "all done $(( $(date +%s) - t0 )) s"
