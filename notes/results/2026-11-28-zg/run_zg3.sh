#!/usr/bin/env bash
# Session (zg) zg3: host costs on a real GPU. flexjit_driver_cost (each driver entry point a call
# makes, timed alone), then pieces.py (the Python wrapper's steps, the C call alone, SDPA; a
# document-masked prefill whose block mask is rebuilt per call).
set -u
cd "$(dirname "$0")"; g=$PWD
out=${OUT:-/tmp/zg3}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 ./flexjit_driver_cost --calls 5000 | tee $out/driver_cost.jsonl
export FLEXJIT_LIBRARY=$g/libflexjit.so FLEXJIT_CACHE_DIR=/tmp/fc_pieces
PYTHONPATH=$g/../../python timeout 300 python3 pieces.py 2>&1 | tee $out/pieces.jsonl
