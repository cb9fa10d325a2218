#!/usr/bin/env bash
# (zr) call 9: per-sequence-length forwards at d128 on 128 x 64 tiles with two CTAs per SM: tests and memcheck.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zr9}; mkdir -p $out
export FLEXJIT_AUTOTUNE=off
T=./gpu_test_attention
(FLEXJIT_CACHE_DIR=/tmp/fa timeout 150 $T --gtest_filter='SeqLensGpu.*' > $out/a.log 2>&1; echo "a rc=$?" >> $out/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fb timeout 150 $T --gtest_filter='RandomProblemsGpu.*:FwdGpu.EveryBlockConfigShape:FwdGpu.HopperWgmmaPath' > $out/b.log 2>&1; echo "b rc=$?" >> $out/rc) &
(export FLEXJIT_CACHE_DIR=/tmp/fc; $T --gtest_filter='SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism' > /dev/null 2>&1;
 timeout 120 compute-sanitizer --tool memcheck --kernel-name kns=attention_fwd --error-exitcode 9 $T --gtest_filter='SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism' > $out/san.log 2>&1; echo "memcheck rc=$?" >> $out/rc) &
wait
cat $out/rc
for f in $out/a.log $out/b.log; do echo "== $f"; grep -E '^\[  (FAILED|PASSED)|^\[       OK|FAILED \]|Failure' $f | head -30; done
tail -3 $out/san.log
