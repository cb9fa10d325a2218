#!/bin/bash
# zzv9: the forward's sections evened out (host only: forward_tile_section) against 0b02126's
# binary, alternating rounds, forward only; then the randomly drawn problems and the
# warp-specialised forward tests on the new binary (each its own kernel cache).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzv9}; r=/tmp/zzv9r/r; mkdir -p $r $out
bash ab2.sh sec suite.json fwd_ms 75 6 "--no-bwd --only long_document_causal_d128,long_causal_d128,long_sliding_window_d128,gqa_causal_d128,causal_d128,document_causal_d128" \
  main:./flexjit_main: even:./flexjit: 2>&1 | grep -v "^sec "
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct9_$n timeout 140 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'RandomProblemsGpu.*' & go b 'SeqLensGpu.WarpSpecializedForward:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks:FwdGpu.KeysBroadcastOverHeadsTakeTheSynchronousTwin' &
go c 'FwdGpu.WarpSpecialized*' &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure|^\[       OK" $r/tests_*.txt | cut -c1-150
(cd /tmp/zzv9r && tar czf $out/zzv9.tar.gz r)
