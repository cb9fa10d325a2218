#!/usr/bin/env bash
# Prepared in (zzzo), not run. Carry .gpu/<tag> holding: gta and flexjit from main (stripped), gta_bw and
# flexjit_bw from the branch bounds-walk-unstaged (bounds_walk_unstaged.patch), ab2.sh
# (notes/results/2026-12-04-zzv/), keys_up_to_len.json and this script.
#  1. main: FwdGpu.MasksWithBoundsAndColumnValuesWithoutBlockMask (written in (zzzo), never run),
#     RandomProblemsGpu.* three times (fresh seeds), BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients
#     (bwd-pdl's programmatic launches inside a graph: not in (zzzo)'s list);
#  2. the branch: the same forward test (now on the tile-bounds walk) and FwdGpu.WarpSpecializedTileBoundsWalk;
#  3. A/B main / branch, forward only, without block masks (the branch skips the tiles past len[b]).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/nz}; r=/tmp/nzr/r; mkdir -p $r $out
save() { (cd /tmp/nzr && tar czf $out/next_zzzo.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run() { local tag=$1 bin=$2 filter=$3; (FLEXJIT_CACHE_DIR=/tmp/fj_$tag timeout 300 ./$bin --gtest_filter="$filter" > $r/tests_$tag.txt 2>&1; echo "$tag rc=$? $(( $(date +%s) - t0 )) s") & }
run main1 gta 'FwdGpu.MasksWithBoundsAndColumnValuesWithoutBlockMask:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients'
run main2 gta 'RandomProblemsGpu.*'
run main3 gta 'RandomProblemsGpu.*'
run main4 gta 'RandomProblemsGpu.*'
run bw1 gta_bw 'FwdGpu.MasksWithBoundsAndColumnValuesWithoutBlockMask'
run bw2 gta_bw 'FwdGpu.WarpSpecializedTileBoundsWalk'
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST|of seed" $r/tests_*.txt | grep -v "^\[       OK" | head -40
save
OUT=$r bash ab2.sh bwab keys_up_to_len.json fwd_ms 120 3 "--no-bwd --no-block-mask" main:./flexjit:: walk:./flexjit_bw:: 2>&1 | grep -v "^bwab "
echo "all $(( $(date +%s) - t0 )) s"
save
