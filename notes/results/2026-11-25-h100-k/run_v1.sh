#!/usr/bin/env bash
# Session (k) v1: every GPU test suite and the Python GPU tests on main (validates session (j)'s host-side checks).
set -u
cd "$(dirname "$0")"
here=$PWD
out=${OUT:-/tmp/v1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
# The tests read templates and data under the source dir they were built in.
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for t in gpu_test_expr gpu_test_jit gpu_test_mask gpu_test_tune gpu_test_attention; do
  timeout 420 ./$t > $r/$t.log 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $r/$t.log | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  grep -E '^\[  FAILED  \]' $r/$t.log | head -20
done
cd $repo && FLEXJIT_LIBRARY=$here/libflexjit.so PYTHONPATH=$repo/python timeout 150 python3 -m pytest -q python/tests > $r/pytest.log 2>&1; echo "pytest rc=$? $(tail -1 $r/pytest.log) $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
