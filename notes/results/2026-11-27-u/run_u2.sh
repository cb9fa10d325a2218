#!/usr/bin/env bash
# Session (u) u2: GPU tests on the new build (dQ staging offsets per tile; 32-bit reads in decode
# and the block-mask kernel), then compute-sanitizer on one backward per head dim and the buffer tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/u2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fcu2
t0=$(date +%s)
tests() {  # name timeout filter
  timeout $2 ./gpu_test_attention --gtest_filter="$3" > $r/$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/$1.txt | tr '\n' ' ') last: $(grep -E '^\[ +(OK|FAILED) ' $r/$1.txt | tail -1)"
  grep -B2 -A12 'Failure' $r/$1.txt | head -40
}
tests t_buffers 200 'DecodeGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:DecodeGpu.MaskClassification*:DecodeGpu.ModsReadLengthsBuffersAndParams:DecodeGpu.TileBounds*:FwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:FwdGpu.OutOfBounds*:FwdGpu.GuardedBufferReadsAreNotReported:BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:BufferGradGpu.*:ErrorWordsGpu.*'
timeout 120 ./gpu_test_attention --gtest_filter=BufferGradGpu.TwoLearnableBuffersThroughSoftcap --gtest_repeat=6 > $r/t_softcap_repeat.txt 2>&1; echo "softcap repeat rc=$?"; grep -E 'slope gradient|FAILED  \]' $r/t_softcap_repeat.txt | head -30
[ "${SKIP_BWD:-0}" = 1 ] || tests t_bwd 330 'BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.SuiteMods:BwdGpu.Gqa8To1AndBshd:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsAndHalfPrecision'
echo "tests $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
