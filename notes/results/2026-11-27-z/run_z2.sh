#!/usr/bin/env bash
# Session (z) z2, the same build as z1: 1) the backward GPU tests z1 did not reach, and those
# with d256 or GQA cases; 2) ncu of the d256 dK/dV kernel alone (locked clocks), base / new / new /
# base, causal and noop d256: duration, tensor pipe.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
export FLEXJIT_CACHE_DIR=/tmp/fc_tests
timeout 330 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.Gqa8To1AndBshd:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.BlockConfigs:BwdGpu.FastAndDeterministicModes:BwdGpu.HopperWgmmaPath:BwdGpu.DeterministicModeTakesTheFasterWayPerCall:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy:BwdGpu.LaterWorkOnTheCallersStreamSeesEveryGradient' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
for p in causal_d256 noop_d256; do
  for v in base new new2 base2; do
    bin=./flexjit; case $v in base*) bin=./flexjit_base;; esac
    FLEXJIT_CACHE_DIR=/tmp/fc_${v%2} timeout 60 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 --section SpeedOfLight --metrics sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_hmma.sum $bin bench --suite suite256.json --only $p > $r/ncu_${p}_$v.log 2>&1
    echo "$p $v $(grep -E '^ +Duration|tensor_op_hmma' $r/ncu_${p}_$v.log | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  done
done
cd $out && tar czf z2.tar.gz r && rm -rf r
