#!/bin/bash
# zzv7: the four forward tests zzv5's first process left at its time limit (one process each),
# then zzv6 (the deterministic A/B).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzv7}; r=/tmp/zzv7r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct7_$n timeout 250 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a FwdGpu.MaskColumnValues & go b FwdGpu.MaskColumnValuesOutOfBounds &
go c FwdGpu.KeysBroadcastOverHeadsTakeTheSynchronousTwin & go d FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt
(cd /tmp/zzv7r && tar czf $out/zzv7.tar.gz r)
bash run_zzv6.sh
