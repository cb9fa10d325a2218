#!/usr/bin/env bash
# Session (l) l11, H100: one chain with GQA (l10: two chains lost there). The ordered tests (GQA
# cases included), then GQA causal in the three ways.
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 120 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.Gqa8To1AndBshd' 2>&1 | grep -E "OK \]|FAILED|Failure|Which is|PASSED" | head -20
for k in 1 2; do
  ./flexjit bench --suite suite.json --only gqa_causal_d128 --bwd-mode deterministic --json /tmp/o.jsonl > /dev/null 2>&1; echo "ordered $(grep -o '"bwd_tflops": [0-9.]*' /tmp/o.jsonl) $(grep -o '"bwd_mode": "[^"]*"' /tmp/o.jsonl)"
  FLEXJIT_DETERMINISTIC_DQ=kernel ./flexjit bench --suite suite.json --only gqa_causal_d128 --bwd-mode deterministic --json /tmp/k.jsonl > /dev/null 2>&1; echo "kernel $(grep -o '"bwd_tflops": [0-9.]*' /tmp/k.jsonl)"
  ./flexjit bench --suite suite.json --only gqa_causal_d128 --json /tmp/f.jsonl > /dev/null 2>&1; echo "fast $(grep -o '"bwd_tflops": [0-9.]*' /tmp/f.jsonl)"
done
