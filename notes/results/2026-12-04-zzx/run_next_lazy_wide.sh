#!/usr/bin/env bash
# (zzx) next, prepared and not run: the lazy rescale with three consumer warpgroups (m192, d64)
# and with one (the short-sequence tiles), which the landed rule leaves eager (unmeasured; the
# m192 form spilled 4 bytes beside the tile-bounds walk under prefix LM at d64, the rest compile
# without spills: ptxas, CPU). Folder beside it: flexjit and gta (stripped builds of main),
# ab2.sh (../2026-12-04-zzv), wide_and_short.json, tvW/templates (main's templates with
# arm_W_lazy_every_warpgroup_count.patch applied). A/B of main (embedded templates) against W,
# three rounds each, then W's GPU tests of those shapes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/nw}; r=/tmp/nwr/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
bash ab2.sh nw1 wide_and_short.json fwd_ms 120 3 "--no-bwd --config m192n128w12s2ws --mask-q-block 192 --only noop_d64,causal_d64" \
  main:./flexjit: W:./flexjit:$PWD/tvW/templates 2>&1 | grep -v "^nw1 "
bash ab2.sh nw2 wide_and_short.json fwd_ms 120 3 "--no-bwd --config m64n128w4s2ws --only noop_short_d128,causal_short_d128,noop_short_d64,causal_short_d64" \
  main:./flexjit: W:./flexjit:$PWD/tvW/templates 2>&1 | grep -v "^nw2 "
echo "ab $(( $(date +%s) - t0 )) s"
FLEXJIT_TEMPLATE_DIR=$PWD/tvW/templates FLEXJIT_CACHE_DIR=/tmp/fct_w timeout 240 ./gta \
  --gtest_filter='FwdGpu.Wide*:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks:FwdGpu.WarpSpecializedModsOneConsumer:FwdGpu.WarpSpecializedShapesOneConsumerWarpgroup:FwdGpu.WarpSpecializedModsTwoCtasPerSm:FwdGpu.WarpSpecializedTwoCtasPerSmManyTilesPerCta' > $r/tests_w.txt 2>&1
echo "tests rc=$?"; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_w.txt
(cd /tmp/nwr && tar czf $out/nw.tar.gz r)
echo "done $(( $(date +%s) - t0 )) s"
