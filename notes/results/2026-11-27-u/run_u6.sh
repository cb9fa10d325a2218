#!/usr/bin/env bash
# Session (u) u6: the fixed decode buffer test; BwdGpu.DeterministicModeSumsDqInOrder on the new
# templates (twice) and on main's (tmpl_base, once); then compute-sanitizer.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/u6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fcu6
t0=$(date +%s)
tests() {  # name timeout filter [extra]
  timeout $2 ./gpu_test_attention --gtest_filter="$3" ${4:-} > $r/$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/$1.txt | tr '\n' ' ') last: $(grep -E '^\[ +(OK|FAILED) ' $r/$1.txt | tail -1)"
  grep -A3 'Failure' $r/$1.txt | grep -v 'Which is' | head -12
}
tests t_decode 60 'DecodeGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:BufferGradGpu.TwoLearnableBuffersThroughSoftcap'
tests t_det_new 200 'BwdGpu.DeterministicModeSumsDqInOrder' --gtest_repeat=2
FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_base FLEXJIT_CACHE_DIR=/tmp/fcu6b tests t_det_base 110 'BwdGpu.DeterministicModeSumsDqInOrder'
san() {  # tool filter timeout
  timeout $3 compute-sanitizer --tool $1 --error-exitcode 1 ./gpu_test_attention --gtest_filter="$2" > $r/san_$1_${2//[^A-Za-z]/_}.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$1_${2//[^A-Za-z]/_}.txt | tr '\n' ' ')"
}
san racecheck BwdGpu.FastModeOnePerHeadDim 100
san synccheck BwdGpu.FastModeOnePerHeadDim 80
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
