#!/usr/bin/env bash
# Session (zf) zf3: the random problems (padded, ragged, decode) with FLEXJIT_AUTOTUNE=off, the
# padded and ragged ones again with autotuning on (an empty cache), and every SeqLensGpu test (the
# shared varlen check now holds rows to their own bound); side by side as separate processes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zf3}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $out/gpu.txt
t0=$(date +%s)
t() {  # name autotune count filter
  FLEXJIT_AUTOTUNE=$2 FLEXJIT_RANDOM_PROBLEMS=$3 FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout ${T:-400} ./gpu_test_attention --gtest_filter=$4 > $out/$1.txt 2>&1
  echo "$1 rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $out/$1.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
}
t padded off ${N:-20} RandomProblemsGpu.PaddedBatchesForwardAndBackward &
t ragged off ${N:-20} RandomProblemsGpu.RaggedBatchesForwardAndBackward &
t decode off ${ND:-30} DecodeGpu.RandomProblems &
t padded_tuned on ${NT:-5} RandomProblemsGpu.PaddedBatchesForwardAndBackward &
t ragged_tuned on ${NT:-5} RandomProblemsGpu.RaggedBatchesForwardAndBackward &
t seqlens off 1 'SeqLensGpu.*' &
wait
for f in $out/*.txt; do grep -H -E "Failure|threw|Expected|Which is|actual|worst row" $f | grep -v "^\S*:\s*out [0-9]" | head -12; done
grep -h -A1 "^\[ problem" $out/padded*.txt | grep -v "^--" | cut -c1-300 | tail -12
