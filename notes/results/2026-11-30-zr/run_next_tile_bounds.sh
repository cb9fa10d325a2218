#!/usr/bin/env bash
# Prepared in (zr), not run: the tile-bounds walk patch (fwd-tile-bounds-walk.patch) on a GPU.
# Here: git apply notes/results/2026-11-30-zr/fwd-tile-bounds-walk.patch; build; strip build/flexjit and
# build/tests/gpu_test_attention into .gpu/<s>/ beside this script, ../shared/bench/suite.json and
# main's stripped flexjit as flexjit_main. About 250 s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/tb}; mkdir -p $out
export FLEXJIT_AUTOTUNE=off
# 1. Correctness: the walk's own test, the tests that call without a block mask, sanitizers on one.
(FLEXJIT_CACHE_DIR=/tmp/ta timeout 400 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedTileBoundsWalk:FwdGpu.WideWarpSpecializedWalksByTheBoundsOfItsOwnMask:FwdGpu.WideWarpSpecializedRejectsABlockMask:FwdGpu.WithoutBlockMaskEvaluatesTheMaskEverywhere:FwdGpu.WideWarpSpecializedMods*:FwdGpu.FullyMasked*:FwdGpu.WarpSpecializedFullyMaskedRows' > $out/tests.log 2>&1; echo "tests rc=$?" >> $out/rc) &
# 2. Speed, forward only (beside the tests: rerun alone if the numbers are close).
wait
for round in 1 2 3; do
  for c in m128n128w8s2ws m192n128w12s2ws; do
    FLEXJIT_CACHE_DIR=/tmp/fb ./flexjit bench --no-bwd --no-block-mask --suite suite.json \
      --only causal_d64,causal_d128,sliding_window_d128,prefix_lm_d128 --config $c --json $out/walk_${c}_$round.jsonl > /dev/null 2>&1
  done
  # A wide config fixed with the call's own block mask: the patch walks by the bounds instead.
  FLEXJIT_CACHE_DIR=/tmp/fb ./flexjit bench --no-bwd --suite suite.json --only causal_d64,sliding_window_d128 \
    --config m192n128w12s2ws --json $out/policy_m192_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fc ./flexjit_main bench --no-bwd --suite suite.json --only causal_d64,causal_d128,sliding_window_d128,prefix_lm_d128 \
    --json $out/tables_$round.jsonl > /dev/null 2>&1
done
cat $out/rc; grep -E '^\[  (FAILED|PASSED)|FAILED \]' $out/tests.log | head
python3 - "$out" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.jsonl'):
    kind=f.split('/')[-1].rsplit('_',1)[0]
    for l in open(f):
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append(d['fwd_tflops'])
for k in sorted(t): print(f'{k[0]:22s} {k[1]:28s}', ' '.join(f'{x:6.1f}' for x in t[k]), ' median %.1f'%statistics.median(t[k]))
PY
# Reading it: the walk against the tables at the same config shows what the tables' full-block
# lists buy over the bounds (expect level); m192 against m128 under the walk decides whether causal
# d64 should take 192 rows (FA4: 471 TF/s in zr5, flexjit 443); policy_m192 is that with the suite's
# own tables, which the patch drops for the wide config. If it wins, make m192 the d64 default for
# masks with bounds (hopper_default) and run the whole forward GPU suite.
