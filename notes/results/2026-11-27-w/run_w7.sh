#!/usr/bin/env bash
# Session (w) w7, main at 5fe1ca4: the forward GPU tests (every kernel, both paths of the column
# values), per-sequence lengths and the error words.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/w7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_w7 timeout 560 ./gpu_test_attention --gtest_filter='FwdGpu.*:SeqLensGpu.*:ErrorWordsGpu.*' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -cE '^\[       OK' $r/tests.txt) ok, $(grep -cE '^\[  FAILED  \] [A-Z]' $r/tests.txt) failed, last: $(grep -E '^\[ RUN' $r/tests.txt | tail -1) $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED|Failure' -A6 $r/tests.txt | head -30
cd $out && tar czf w7.tar.gz r && rm -rf r
