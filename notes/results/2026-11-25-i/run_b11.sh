#!/usr/bin/env bash
# Issue 13: sanitizers on the fast backward's two dK/dV kernels ('g' and 'ws', one per head dim),
# with every hazard racecheck reports listed by the function that wrote; then every BwdGpu test.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b11}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for tool in racecheck memcheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --print-limit 1000 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "racecheck hazards by writer:"; grep -E "Race reported between" $r/san_racecheck.txt | sed 's/+0x[0-9a-f]*//' | sort | uniq -c
echo "sanitizers $(( $(date +%s) - t0 )) s"
for i in $(seq 0 15); do
  GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX=$i timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.*' > /tmp/t.$i.log 2>&1 &
done
wait
cat /tmp/t.*.log > $r/tests.txt
echo "tests $(( $(date +%s) - t0 )) s: $(grep -c '^\[       OK' $r/tests.txt) ok, $(grep -c '^\[  FAILED  \]' $r/tests.txt) failed lines"
grep -B3 -A6 "Failure" $r/tests.txt | head -20
cd $out && tar czf r.tar.gz r && rm -rf r
