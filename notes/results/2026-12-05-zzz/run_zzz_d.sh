#!/bin/bash
# (zzz) call 5 (carry .gpu/zzz): main's build with the lazy rescale on every warpgroup count and on
# mma.sync (1215030, e280e6f): the forward GPU tests against float64, five processes.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzd}; r=/tmp/zzzdr/r; mkdir -p $r $out
save() { (cd /tmp/zzzdr && tar czf $out/zzzd.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 250 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'FwdGpu.ScoresThatPassTheRunningMaxLater*' &
go b 'FwdGpu.*:-FwdGpu.*WarpSpecialized*:FwdGpu.ScoresThatPassTheRunningMaxLater*:FwdGpu.MaskColumnValues*:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks' &
go c 'FwdGpu.WarpSpecializedShapesOneConsumerWarpgroup:FwdGpu.WarpSpecializedModsOneConsumer:FwdGpu.WideWarpSpecializedShapesM192*:FwdGpu.WideWarpSpecializedModsM192:FwdGpu.WarpSpecializedOnePerHeadDim' &
go d 'RandomProblemsGpu.*:Configs/NanGpu.*:NegativeScaleGpu.*' &
go e 'SeqLensGpu.*Forward*:SeqLensGpu.Wgmma*:FwdGpu.MaskColumnValues' &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | head -40
grep -hc "^\[       OK" $r/tests_*.txt | paste -sd+ | bc
echo "done $(( $(date +%s) - t0 )) s"; save
