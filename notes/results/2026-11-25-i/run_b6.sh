#!/usr/bin/env bash
# Issue 13 with the fast mode as the default backward: every GPU test binary (sharded over the
# cores), then the defaults beside FlexAttention, FA2 and cuDNN in one run, and the deterministic
# mode on the same problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for bin in gpu_test_attention gpu_test_expr gpu_test_jit gpu_test_mask gpu_test_tune; do
  s=$(date +%s)
  for i in $(seq 0 15); do
    GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX=$i timeout 420 ./$bin > /tmp/$bin.$i.log 2>&1 &
  done
  wait
  cat /tmp/$bin.*.log > $r/$bin.txt
  echo "== $bin $(( $(date +%s) - s )) s: $(grep -c '^\[       OK' $r/$bin.txt) ok, $(grep -c '^\[  FAILED  \]' $r/$bin.txt) failed lines, $(grep -c '^\[  SKIPPED \]' $r/$bin.txt) skipped"
  grep -B3 -A6 "Failure" $r/$bin.txt | head -30
done
echo "tests $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
