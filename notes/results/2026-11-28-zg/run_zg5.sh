#!/usr/bin/env bash
# Session (zg) zg5: block-mask tables in caller storage (C API 1004) and the arch cached per
# context. The GPU mask tests, a few forward / backward tests that build masks, the Python GPU
# tests (the per-call document mask inside a CUDA graph among them), then pieces.py for the
# per-call document mask's cost and capture.
set -u
cd "$(dirname "$0")"; g=$PWD
out=${OUT:-/tmp/zg5}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 120 ./gpu_test_mask > $out/t_mask.txt 2>&1
echo "mask tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $out/t_mask.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED' $out/t_mask.txt
FLEXJIT_RANDOM_PROBLEMS=3 FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 200 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.*:FwdGpu.WithoutBlockMask*:FwdGpu.FullyMasked*:BwdGpu.FastModeOnePerHeadDim' > $out/t_attn.txt 2>&1
echo "attention tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $out/t_attn.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED' $out/t_attn.txt
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links $g/wheels pytest > /dev/null 2>&1
export FLEXJIT_LIBRARY=$g/libflexjit.so
(cd ../../python && FLEXJIT_CACHE_DIR=/tmp/fc_py PYTHONPATH=$PWD timeout 250 python3 -m pytest -q -rs tests > $out/pytest.txt 2>&1; echo "pytest rc=$?")
grep -E 'passed|failed|Error' $out/pytest.txt | tail -5; echo "$(( $(date +%s) - t0 )) s"
PYTHONPATH=$g/../../python FLEXJIT_CACHE_DIR=/tmp/fc_lat timeout 120 python3 pieces.py > $out/pieces.jsonl 2>&1; grep -E 'whole|documents|graph' $out/pieces.jsonl
