#!/bin/bash
# zzg6: the ordered sums (deterministic mode) on the split GQA groups: the new test against the
# float64 reference (bitwise repeats, a second stream), then the deterministic backward of three
# few-kv-head rows on this build (its splits) and with FLEXJIT_BWD_HEAD_SPLITS=1 (whole groups, as main).
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzg6}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fct timeout 95 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeSplitsGqaGroupsOverCtas' > $out/tests6.txt 2>&1; echo "rc=$?" >> $out/tests6.txt
grep -E '^\[  (PASSED|FAILED) |^\[ +OK|FAILED  \]|rc=|Failure' $out/tests6.txt | tail -12; grep -A4 "Failure" $out/tests6.txt | head -30; echo "tests $(( $(date +%s) - t0 )) s"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc6
for v in split whole; do
  left=$(( 140 - ($(date +%s) - t0) )); [ $left -lt 10 ] && break
  if [ $v = whole ]; then export FLEXJIT_BWD_HEAD_SPLITS=1; fi
  timeout $left ./flexjit bench --suite gqa_det3.json --bwd-mode deterministic --json $out/det_$v.jsonl > $out/det_$v.log 2>&1
  grep -o '"bwd_mode":"[^"]*"\|"bwd_tflops":[0-9.]*\|"name":"[^"]*"' $out/det_$v.jsonl | paste - - - ; echo "$v $(( $(date +%s) - t0 )) s"
done
