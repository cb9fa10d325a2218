#!/bin/bash
# (zzzd) call 3 (carry .gpu/zzzd): the backward GPU tests call 2 ran out of time for (its groups d
# and g timed out beside the sanitizers), on gta = bwd-fm (FMu) alone.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzdc}; r=/tmp/zzzdcr/r; mkdir -p $r $out
save() { (cd /tmp/zzzdcr && tar czf $out/zzzdc.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 400 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go d1 'BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets' &
go d2 'BwdGpu.HalfSlabSlicesAtHeadDimsAbove128' &
go d3 'BwdGpu.OddLengthsAndDifferentLengths' &
go g1 'BwdGpu.OrderedModeSplitsGqaGroupsOverCtas' &
go g2 'BwdGpu.OrderedModeLongDocuments:BwdGpu.DeterministicModeSumsDqInOrder' &
wait; cat $r/rc.txt
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure|^\[       OK" $r/tests_*.txt | sort | uniq -c
echo "done $(( $(date +%s) - t0 )) s"; save
