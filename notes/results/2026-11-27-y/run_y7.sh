#!/usr/bin/env bash
# Session (y) y7: more backward GPU tests on HEAD 5b42dad (585a691's kernels + the column-value
# helper's rename): suite mods, odd and different lengths, GQA 8:1 and odd ratios, 32/64-bit
# buffer offsets, per-sequence lengths; then the forward column-value tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/y7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc_y7
t0=$(date +%s)
timeout 150 ./gpu_test_attention --gtest_filter='BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism:SeqLensGpu.WgmmaLargeTiles' > $r/tests_bwd.txt 2>&1
echo "bwd tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests_bwd.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests_bwd.txt | head -20
left=$(( 190 - ($(date +%s) - t0) ))
[ $left -gt 15 ] && timeout $left ./gpu_test_attention --gtest_filter='FwdGpu.MaskColumnValuesOutOfBounds:FwdGpu.MaskColumnValues' > $r/tests_fwd.txt 2>&1
echo "fwd tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests_fwd.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests_fwd.txt | head -20
cd $out && tar czf y7.tar.gz r && rm -rf r
