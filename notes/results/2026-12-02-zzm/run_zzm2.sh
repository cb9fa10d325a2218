#!/bin/bash
# zzm2: compute-sanitizer on the kernels (zzl) and (zzm) changed, one test case per process so
# that racecheck can finish: the forward's P V over V's columns (13 cases; owed since (zzl)), the
# synchronous dK/dV and dQ kernels (12 cases, racecheck two per process, memcheck and synccheck).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzm2}; r=/tmp/zzm2r/r; mkdir -p $r $out
save() { (cd /tmp/zzm2r && tar czf $out/zzm2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
s() { tool=$1; name=$2; filter=$3; FLEXJIT_CACHE_DIR=/tmp/fcs_$name timeout 560 compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter="$filter" > $r/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s) - t0 )) s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/$name.txt | tr '\n' ' ') $(grep -c 'OK \]' $r/$name.txt) ok" >> $r/rc.txt; }
for i in $(seq 0 12); do s racecheck rf$i "FwdGpu/OutputGemmSpansOnlyVsColumns.Case/$i" & done
for i in 0 2 4 6 8 10; do s racecheck rs$i "BwdGpu/SynchronousKernelsSpanOnlyTheTensorsColumns.Case/$i:BwdGpu/SynchronousKernelsSpanOnlyTheTensorsColumns.Case/$((i+1))" & done
s memcheck ms "BwdGpu/SynchronousKernelsSpanOnlyTheTensorsColumns.*" &
s synccheck ss "BwdGpu/SynchronousKernelsSpanOnlyTheTensorsColumns.*" &
( while sleep 60; do save; done ) & saver=$!
wait $(jobs -p | grep -v $saver) 2>/dev/null
kill $saver; sort -V $r/rc.txt; save
