#!/usr/bin/env bash
# Session (zf) zf2: the random-problem sweep (tests/attention/random_problems_gpu_test.cpp) on main
# + the sweep, FLEXJIT_AUTOTUNE=off, the padded and the ragged test as two processes side by side;
# then the seq_lens tests that now take their check from tests/support/varlen_check.hpp.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zf2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $out/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_RANDOM_PROBLEMS=${N:-10}
FLEXJIT_CACHE_DIR=/tmp/fc_p timeout ${T:-420} ./gpu_test_attention --gtest_filter=RandomProblemsGpu.PaddedBatchesForwardAndBackward > $out/padded.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_r timeout ${T:-420} ./gpu_test_attention --gtest_filter=RandomProblemsGpu.RaggedBatchesForwardAndBackward > $out/ragged.txt 2>&1 &
wait
echo "sweep $(( $(date +%s) - t0 )) s"
grep -E "^\[  (PASSED|FAILED) |Failure|threw|problem [0-9]+ of seed|Expected|Which is|actual" $out/padded.txt $out/ragged.txt | head -40
grep -h -A1 "^\[ problem" $out/padded.txt | grep -v "^--" | cut -c1-400 | head -80
if [ -n "${SEQ:-}" ]; then
  FLEXJIT_CACHE_DIR=/tmp/fc_s timeout 150 ./gpu_test_attention --gtest_filter='SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism:SeqLensGpu.WgmmaSmallTiles' > $out/seqlens.txt 2>&1
  echo "seqlens rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $out/seqlens.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
fi
