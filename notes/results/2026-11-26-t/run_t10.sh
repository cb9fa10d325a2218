#!/usr/bin/env bash
# Session (t) t10: the landing build of the 32-bit buffer reads (the fast backward's dK/dV kernel
# keeping 64-bit ones): the GPU tests that read buffers, both read forms, both backward modes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t10}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fct10
t0=$(date +%s)
timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:FwdGpu.OutOfBoundsReadsThroughReversedViewsAreReported:FwdGpu.GuardedBufferReadsAreNotReported:FwdGpu.OutOfBoundsBufferReadsAreReported:BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:BufferGradGpu.*:SeqLensGpu.MmaSyncIndirectBufferMask:ErrorWordsGpu.*' > $r/t_tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_tests.txt | tr '\n' ' ')"
grep -B2 -A10 Failure $r/t_tests.txt | head -30
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
