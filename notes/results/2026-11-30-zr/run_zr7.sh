#!/usr/bin/env bash
# (zr) call 7: GPU tests of the synchronous wgmma forward with two CTAs per SM at d64 (and its spills), memcheck on one.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zr7}; mkdir -p $out
export FLEXJIT_AUTOTUNE=off
T=./gpu_test_attention
(FLEXJIT_CACHE_DIR=/tmp/fa timeout 400 $T --gtest_filter='FwdGpu.HopperWgmmaPath:FwdGpu.EveryBlockConfigShape:FwdGpu.KeysBroadcast*:FwdGpu.HalfPrecisionAndHeadDims:FwdGpu.OddLengths' > $out/a.log 2>&1; echo "a rc=$?" >> $out/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fb timeout 400 $T --gtest_filter='SeqLensGpu.*' > $out/b.log 2>&1; echo "b rc=$?" >> $out/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fc timeout 400 $T --gtest_filter='RandomProblemsGpu.*:FwdGpu.MaskColumnValues' > $out/c.log 2>&1; echo "c rc=$?" >> $out/rc) &
(
  export FLEXJIT_CACHE_DIR=/tmp/fd
  $T --gtest_filter='FwdGpu.KeysBroadcastOverHeadsTakeTheSynchronousTwin' > /dev/null 2>&1
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --kernel-name kns=attention_fwd --error-exitcode 9 $T --gtest_filter='FwdGpu.KeysBroadcastOverHeadsTakeTheSynchronousTwin' > $out/san_$tool.log 2>&1
    echo "san $tool rc=$?" >> $out/rc
  done
) &
wait
cat $out/rc
for f in $out/a.log $out/b.log $out/c.log; do echo "== $f"; grep -E '^\[  (FAILED|PASSED)|^\[       OK|FAILED \]|Failure' $f | head -40; done
for t in memcheck racecheck; do echo "== $t"; tail -3 $out/san_$t.log; done
