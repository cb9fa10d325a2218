#!/bin/bash
# zzi3: the GPU tests of the two-CTA shapes (shapes, per-sequence lengths), memcheck, the tuner's
# GPU tests (its candidate lists grew), then the rest of the forward's GPU tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzi3}; r=/tmp/zzi3r/r; mkdir -p $r $out
save() { (cd /tmp/zzi3r && tar czf $out/zzi3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - t0) )); }
t() { n=$1; shift; FLEXJIT_CACHE_DIR=/tmp/fct timeout $(left) "$@" > $r/$n.txt 2>&1; echo "$n rc=$? $(grep -E '^\[  (PASSED|FAILED) |FAILED \]|ERROR SUMMARY' $r/$n.txt | tail -4 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; save; }
t new ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedShapesOneConsumerWarpgroup:SeqLensGpu.WarpSpecializedForward'
t memcheck compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter=FwdGpu.WarpSpecializedTwoCtasPerSmManyTilesPerCta
t tune ./gpu_test_tune
t fwd ./gpu_test_attention --gtest_filter='FwdGpu.*:-FwdGpu.WarpSpecializedShapesOneConsumerWarpgroup:FwdGpu.MaskColumnValues:FwdGpu.WarpSpecializedModsTwoCtasPerSm:FwdGpu.WarpSpecializedTwoCtasPerSmManyTilesPerCta:FwdGpu.WarpSpecializedModsOneConsumer:FwdGpu.WarpSpecializedManyTilesPerCta:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks'
grep -E "^\[  FAILED|Failure" -A5 $r/*.txt | head -40
