#!/usr/bin/env bash
# Session (zf) zf4: zf3's failing seeds again (the row floor now 0.01), then a larger draw of every
# random-problem test, FLEXJIT_AUTOTUNE=off, side by side as separate processes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zf4}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $out/gpu.txt
t0=$(date +%s)
t() {  # name autotune count filter [seed]
  env ${5:+FLEXJIT_TEST_SEED=$5} FLEXJIT_AUTOTUNE=$2 FLEXJIT_RANDOM_PROBLEMS=$3 FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout ${T:-400} ./gpu_test_attention --gtest_filter=$4 > $out/$1.txt 2>&1
  echo "$1 rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $out/$1.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
}
[ -n "${FLEXJIT_TEST_SEED:-}" ] && echo "note: FLEXJIT_TEST_SEED is set outside"
unset FLEXJIT_TEST_SEED
t padded_zf3 off 20 RandomProblemsGpu.PaddedBatchesForwardAndBackward 14858171757235318441 &
t ragged_zf3 off 20 RandomProblemsGpu.RaggedBatchesForwardAndBackward 13532445969191182221 &
t padded off ${N:-50} RandomProblemsGpu.PaddedBatchesForwardAndBackward &
t ragged off ${N:-50} RandomProblemsGpu.RaggedBatchesForwardAndBackward &
t decode off ${N:-50} DecodeGpu.RandomProblems &
wait
for f in $out/*.txt; do grep -H -E "Failure|threw|Expected|Which is|actual|worst row" $f | grep -v "^\S*:\s*out [0-9]" | head -16; done
