#!/usr/bin/env bash
# Session (l) l12: the ordered sums captured into a CUDA graph and replayed (and the rest of the
# deterministic-mode tests on the final code).
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 170 ./gpu_test_attention --gtest_filter='BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.FastAndDeterministicModes' 2>&1 | grep -E "OK \]|FAILED|Failure|Which is|PASSED|Expected" | head -30
