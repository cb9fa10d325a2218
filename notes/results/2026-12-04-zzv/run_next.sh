#!/bin/bash
# Next session (prepared in (zzv), not run): (1) the three FwdGpu.WarpSpecialized* tests zzv9 did
# not reach, on 5d4c2cb or later; (2) ncu of the fast backward's dK/dV kernel on long documents and
# long causal: SM active cycles avg / max / min against elapsed (sim_walk_order.py predicts about
# 88 % busy for long documents under the causal model's launch order, 99 % heaviest-first).
# Setup here: mkdir -p .gpu/next && strip -o .gpu/next/flexjit build/flexjit &&
#   strip -o .gpu/next/gta build/tests/gpu_test_attention &&
#   cp notes/results/2026-12-04-zzv/run_next.sh ../shared/bench/suite.json .gpu/next/
# Run: bash .gpu/next/run_next.sh with carry [".gpu/next"] (about 200 s).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/next}; r=/tmp/nextr/r; mkdir -p $r $out
save() { (cd /tmp/nextr && tar czf $out/next.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fctn_$n timeout 200 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a FwdGpu.WarpSpecializedOnePerHeadDim & go b FwdGpu.WarpSpecializedRowsPastTheQueriesEnd &
go c FwdGpu.WarpSpecializedTileBoundsWalk &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt
save
for prob in long_document_causal_d128 long_causal_d128; do
  FLEXJIT_CACHE_DIR=/tmp/fcn timeout 150 ncu --kernel-name flexjit_attention_bwd_dkdv --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
    --metrics sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min \
    -o $r/rep_$prob ./flexjit bench --suite suite.json --only $prob > $r/ncu_$prob.log 2>&1
  echo "ncu $prob rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$prob.ncu-rep --print-details all > $r/details_$prob.txt 2>&1
  grep -E "Duration|Elapsed Cycles|SM Active Cycles|cycles_active|Grid Size|Waves Per SM|Tensor Cycles Active" $r/details_$prob.txt | head -12
  rm -f $r/rep_$prob.ncu-rep; save
done
echo "done $(( $(date +%s) - t0 )) s"
