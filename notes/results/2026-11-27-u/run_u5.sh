#!/usr/bin/env bash
# Session (u) u5: the rest of u2's buffer tests, then the backward tests (each group under its own timeout).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/u5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fcu2
t0=$(date +%s)
tests() {  # name timeout filter
  timeout $2 ./gpu_test_attention --gtest_filter="$3" > $r/$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/$1.txt | tr '\n' ' ') last: $(grep -E '^\[ +(OK|FAILED) ' $r/$1.txt | tail -1)"
  grep -B2 -A12 'Failure' $r/$1.txt | head -40
}
tests t_buffers2 200 'DecodeGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:FwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:FwdGpu.OutOfBounds*:FwdGpu.GuardedBufferReadsAreNotReported:ErrorWordsGpu.*:DecodeGpu.TileBounds*'
tests t_bwd 370 'BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.SuiteMods:BwdGpu.Gqa8To1AndBshd:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsAndHalfPrecision'
echo "tests $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
