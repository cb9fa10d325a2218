#!/bin/bash
# zzr1 (build: STATS_PAIRS at head dims 33-64): the random problems (default counts), the
# warp-specialised lengths tests and the per-head-dim fast backward, three processes at once
# (each compiles its own kernels; the GPU work is small).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzr1}; r=/tmp/zzr1r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 540 ./gpu_test_attention --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'RandomProblemsGpu.PaddedBatchesForwardAndBackward' &
go b 'RandomProblemsGpu.AnyHeadDimForwardAndBackward:BwdGpu.FastModeOnePerHeadDim' &
go c 'RandomProblemsGpu.RaggedBatchesForwardAndBackward:SeqLensGpu.WarpSpecializedBackward:SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism' &
wait
cat $r/rc.txt; grep -hE "OK \]|FAILED|PASSED|Failure|seed" $r/tests_*.txt | head -40
(cd /tmp/zzr1r && tar czf $out/zzr1.tar.gz r)
