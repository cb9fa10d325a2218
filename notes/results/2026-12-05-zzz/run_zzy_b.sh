#!/usr/bin/env bash
# (zzy) prepared, not run. Call 3 of 3 (carry .gpu/zzy; the folder of run_zzy_a.sh).
# 1. The branch's GPU tests: FwdGpu.ScoresThatPassTheRunningMaxLater and ...OnOtherTiles (new:
#    m192 with and without 192-row tables, one consumer warpgroup at d64 / d128, the 'g' twin and
#    mma.sync), the three-warpgroup and one-warpgroup suites, and the six forward tests (zzx) did
#    not reach. Then ...OnOtherTiles under tvS (the lazy synchronous arm) and, with the 192-row
#    table tests, under tvW2 (W with the lazy form on masked m192 too, but for the tile-bounds walk).
# 2. A/B of main against W on the one-warpgroup tiles (short sequences, --config) and of main
#    against S on the synchronous kernels (--config m128n128w8s2g / m128n64w4s2), three rounds;
#    d64 masks (d64_masks.json: causal, a 1024-key window, GQA 4:1 causal) on main's default
#    (two warpgroups, lazy) against m192 over 192-row tables, eager (main) and lazy (W2).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzyb}; r=/tmp/zzybr/r; mkdir -p $r $out
save() { (cd /tmp/zzybr && tar czf $out/zzyb.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/fct_a timeout 300 ./gta --gtest_filter='FwdGpu.ScoresThatPassTheRunningMaxLater*:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks:FwdGpu.WarpSpecializedShapesOneConsumerWarpgroup:FwdGpu.WarpSpecializedModsOneConsumer' > $r/tests_a.txt 2>&1; echo "tests_a rc=$?" >> $r/rc.txt) &
(FLEXJIT_CACHE_DIR=/tmp/fct_b timeout 300 ./gta --gtest_filter='FwdGpu.Wide*:FwdGpu.OutOfBoundsBufferReadsAreReported:FwdGpu.MaskColumnValues:FwdGpu.MaskColumnValuesOutOfBounds:FwdGpu.KeysBroadcastOverHeadsTakeTheSynchronousTwin:FwdGpu.WarpSpecializedRowsPastTheQueriesEnd:FwdGpu.WarpSpecializedTileBoundsWalk' > $r/tests_b.txt 2>&1; echo "tests_b rc=$?" >> $r/rc.txt) &
(FLEXJIT_TEMPLATE_DIR=$PWD/tvS/templates FLEXJIT_CACHE_DIR=/tmp/fct_s timeout 300 ./gta --gtest_filter='FwdGpu.ScoresThatPassTheRunningMaxLaterOnOtherTiles:FwdGpu.SuiteMods:FwdGpu.FullyMaskedRowsGiveZeroAndMinusInfinity:Configs/NanGpu.*' > $r/tests_s.txt 2>&1; echo "tests_s rc=$?" >> $r/rc.txt) &
(FLEXJIT_TEMPLATE_DIR=$PWD/tvW2/templates FLEXJIT_CACHE_DIR=/tmp/fct_w2 timeout 300 ./gta --gtest_filter='FwdGpu.ScoresThatPassTheRunningMaxLaterOnOtherTiles:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks' > $r/tests_w2.txt 2>&1; echo "tests_w2 rc=$?" >> $r/rc.txt) &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | head -40
echo "tests $(( $(date +%s) - t0 )) s"
save
bash ab2.sh yw wide_and_short.json fwd_ms 45 3 "--no-bwd --config m64n128w4s2ws --only noop_short_d64,causal_short_d64" \
  main:./flexjit: W:./flexjit:$PWD/tvW/templates 2>&1 | grep -v "^yw "
bash ab2.sh yw2 wide_and_short.json fwd_ms 45 3 "--no-bwd --config m64n64w4s2ws --only noop_short_d128,causal_short_d128" \
  main:./flexjit: W:./flexjit:$PWD/tvW/templates 2>&1 | grep -v "^yw2 "
bash ab2.sh yc d64_masks.json fwd_ms 100 3 "--no-bwd" main:./flexjit: "m192:./flexjit::--config m192n128w12s2ws --mask-q-block 192" \
  "W2:./flexjit:$PWD/tvW2/templates:--config m192n128w12s2ws --mask-q-block 192" 2>&1 | grep -v "^yc "
only=noop_d128,causal_d128,noop_d64,causal_d64,document_causal_d128,alibi_causal_d128,softcap_causal_d128
bash ab2.sh ys1 suite.json fwd_ms 80 3 "--no-bwd --config m128n128w8s2g --only $only" main:./flexjit: S:./flexjit:$PWD/tvS/templates 2>&1 | grep -v "^ys1 "
[ $(( $(date +%s) - t0 )) -lt 480 ] && bash ab2.sh ys2 suite.json fwd_ms 80 3 "--no-bwd --config m128n64w4s2 --only $only" main:./flexjit: S:./flexjit:$PWD/tvS/templates 2>&1 | grep -v "^ys2 "
for t in yw yw2 yc ys1 ys2; do cp /tmp/${t}r/r/ab.txt $r/ab_$t.txt 2>/dev/null; done
echo "done $(( $(date +%s) - t0 )) s"
save
