#!/usr/bin/env bash
# For the next session's first call (zi1): what (zh) left unrun on a GPU. Stage in .gpu/<s>/:
# gpu_test_attention (stripped, from main at or after f1d9760) and this script. Then:
#   1. the tests whose code (zh) changed without a GPU run: the harness's OwnedStream (4faa4f1) in
#      the stream, capture and error-word tests; DeterministicModeSumsDqInOrder on the landed build;
#   2. compute-sanitizer memcheck and synccheck on BwdGpu.OrderedModeLongDocumentsTakeTwoChains
#      (the two-chain walk through block-sparse tables, codegen::ordered_long_chains), side by side.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zi1}; r=$out/r; mkdir -p $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 540 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeLongDocumentsTakeTwoChains > $r/san_$tool.txt 2>&1 &
done
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 540 ./gpu_test_attention --gtest_filter='BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:BwdGpu.DeterministicModeSumsDqInOrder:ErrorWordsGpu.*' > $r/tests.txt 2>&1
echo "tests: $(grep -E '^\[       OK|^\[  FAILED|^\[  PASSED' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
wait
for tool in memcheck synccheck; do echo "$tool: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"; done
echo "$(( $(date +%s) - t0 )) s"
