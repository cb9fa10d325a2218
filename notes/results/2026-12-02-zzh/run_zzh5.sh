#!/bin/bash
# zzh5: the forward producer loads a work tile's first key tiles before publishing it: main's
# templates (tpl_old) against the build's, forward only, two alternating rounds. If the short
# problems gain, the forward tests of the producer's paths and racecheck/synccheck of one; if not,
# what zzg owed a GPU (the deterministic-mode and split backward tests).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzh5}; r=/tmp/zzh5r/r; mkdir -p $r $out
save() { (cd /tmp/zzh5r && tar czf $out/zzh5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for round in 1 2; do
  for arm in old new; do
    T=""; [ $arm = old ] && T=$PWD/tpl_old
    for s in short odd suite5; do
      FLEXJIT_TEMPLATE_DIR=$T FLEXJIT_CACHE_DIR=/tmp/fc_$arm timeout 200 ./flexjit bench --suite $s.json --no-bwd --json $r/${arm}_${s}_$round.jsonl > $r/${arm}_${s}_$round.log 2>&1 || tail -3 $r/${arm}_${s}_$round.log
    done
    echo "$arm $round $(( $(date +%s) - t0 )) s"
  done
  save
done
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob, statistics
r = sys.argv[1]
def load(arm):
    d = {}
    for f in sorted(glob.glob(f"{r}/{arm}_*_*.jsonl")):
        for line in open(f):
            if '"name"' in line:
                o = json.loads(line); d.setdefault(o["name"], []).append(o["fwd_tflops"])
    return d
o, n = load("old"), load("new")
short = []
for k in o:
    a, b = max(o[k]), max(n.get(k, [0]))
    if k.startswith(("causal_s", "noop_s", "gqa7")): short.append(b / a)
    print(f"{k:34s} old {a:6.1f} new {b:6.1f} x{b / a:.3f}  ({' '.join(f'{x:.0f}' for x in o[k])} / {' '.join(f'{x:.0f}' for x in n.get(k, []))})")
print(f"SHORT_GEOMEAN {statistics.geometric_mean(short):.4f}")
PY
cat $r/ab.txt; save
g=$(grep SHORT_GEOMEAN $r/ab.txt | awk '{print $2}')
if python3 -c "import sys; sys.exit(0 if float('$g') >= 1.02 else 1)"; then
  tests='FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks:FwdGpu.WarpSpecializedManyTilesPerCta:FwdGpu.WarpSpecializedTileBoundsWalk:SeqLensGpu.WarpSpecializedForward:FwdGpu.SuiteMods:FwdGpu.OddLengths:FwdGpu.WarpSpecializedRowsPastTheQueriesEnd:FwdGpu.WarpSpecializedShapesBf16:FwdGpu.WideWarpSpecializedShapesM192Bf16:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks:FwdGpu.WarpSpecializedModsThreeStages:FwdGpu.WideWarpSpecializedWalksByTheBoundsOfItsOwnMask'
  FLEXJIT_CACHE_DIR=/tmp/fct timeout $(( 470 - ($(date +%s) - t0) )) ./gpu_test_attention --gtest_filter="$tests" > $r/tests.txt 2>&1; echo "rc=$?" >> $r/tests.txt
  grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=|Failure|^\[       OK' $r/tests.txt | tail -20; echo "tests $(( $(date +%s) - t0 )) s"; save
  for tool in racecheck synccheck; do
    FLEXJIT_CACHE_DIR=/tmp/fct timeout $(( 560 - ($(date +%s) - t0) )) compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter=FwdGpu.WarpSpecializedManyTilesPerCta > $r/$tool.txt 2>&1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" $r/$tool.txt | tail -3; echo "$tool $(( $(date +%s) - t0 )) s"
  done
else
  echo "no gain on short problems: what zzg owed"
  tests='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeSplitsGqaGroupsOverCtas:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.CapturedInAGraphAndReplayedGivesTheSameGradients:BwdGpu.FastAndDeterministicModes'
  FLEXJIT_CACHE_DIR=/tmp/fct timeout $(( 440 - ($(date +%s) - t0) )) ./gpu_test_attention --gtest_filter="$tests" > $r/owed.txt 2>&1; echo "rc=$?" >> $r/owed.txt
  grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=|Failure|^\[       OK' $r/owed.txt | tail -20; echo "owed $(( $(date +%s) - t0 )) s"; save
  FLEXJIT_CACHE_DIR=/tmp/fct timeout $(( 560 - ($(date +%s) - t0) )) compute-sanitizer --tool synccheck ./gpu_test_attention --gtest_filter=BwdGpu.FastModeSplitsGqaGroupsOverCtas > $r/sync_split.txt 2>&1
  grep -E "ERROR SUMMARY|PASSED|FAILED" $r/sync_split.txt | tail -2
fi
echo "$(( $(date +%s) - t0 )) s"; save
