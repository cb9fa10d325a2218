#!/usr/bin/env bash
# (zr) call 4: GPU tests touched by the rows-only pass and the d64 default, and compute-sanitizer on the wide shapes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zr4}; mkdir -p $out
export FLEXJIT_AUTOTUNE=off
T=./gpu_test_attention
(GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0 FLEXJIT_CACHE_DIR=/tmp/fa timeout 540 $T --gtest_filter='FwdGpu.*' > $out/fwd0.log 2>&1; echo "fwd0 rc=$?" >> $out/rc) &
(GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1 FLEXJIT_CACHE_DIR=/tmp/fb timeout 540 $T --gtest_filter='FwdGpu.*' > $out/fwd1.log 2>&1; echo "fwd1 rc=$?" >> $out/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fc timeout 540 $T --gtest_filter='SeqLensGpu.*:NanGpu*:*NanGpu*:NegativeScaleGpu.*:RandomProblemsGpu.*' > $out/other.log 2>&1; echo "other rc=$?" >> $out/rc) &
(
  export FLEXJIT_CACHE_DIR=/tmp/fd
  $T --gtest_filter='FwdGpu.WideWarpSpecializedOnePerShape' > /dev/null 2>&1  # compile outside the sanitizer
  for tool in memcheck racecheck synccheck; do
    timeout 170 compute-sanitizer --tool $tool --kernel-name kns=attention_fwd --error-exitcode 9 $T --gtest_filter='FwdGpu.WideWarpSpecializedOnePerShape' > $out/san_$tool.log 2>&1
    echo "san $tool rc=$?" >> $out/rc
  done
) &
wait
cat $out/rc
for f in $out/fwd0.log $out/fwd1.log $out/other.log; do echo "== $f"; grep -E '^\[  (FAILED|PASSED)|^\[       OK|FAILED \]|Failure|error' $f | head -60; done
for t in memcheck racecheck synccheck; do echo "== $t"; tail -4 $out/san_$t.log; done
