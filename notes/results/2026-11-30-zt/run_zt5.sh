#!/usr/bin/env bash
# (zt) call 5: per-sequence lengths in the dK/dV kernel's column slices (head dim 256: score
# halves, pairs of CTAs, the ordered sums' ranker). Every SeqLensGpu test and the random ragged
# problems; memcheck on WarpSpecializedBackward and synccheck on WarpSpecializedOrderedBackward;
# ragged256.json fast and deterministic, main (flexjit_main: the dQ kernel's way) against this
# build, and FlexAttention (Triton) beside them.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zt5}; L=/tmp/zt5l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/ft timeout 280 ./gpu_test_attention --gtest_filter='SeqLensGpu.*:RandomProblemsGpu.Ragged*:BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy' > $L/tests.log 2>&1; echo "tests rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fm timeout 240 compute-sanitizer --tool memcheck --kernel-name kns=bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedBackward' > $L/memcheck.log 2>&1; echo "memcheck rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fs timeout 200 compute-sanitizer --tool synccheck --kernel-name kns=bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedOrderedBackward' > $L/synccheck.log 2>&1; echo "synccheck rc=$?" >> $L/rc) &
wait
cat $L/rc; grep -E '^\[       OK|^\[  FAILED  \] [A-Z]' $L/tests.log | head -30; grep -hE 'Failure|Which is|Expected|seed' $L/tests.log | head -20; grep -hE 'ERROR SUMMARY|^\[  (PASSED|FAILED)|Failure' $L/memcheck.log $L/synccheck.log | head
echo "tests $(( $(date +%s) - t0 )) s"
for round in 1 2; do
  for m in fast deterministic; do
    [ $round = 1 ] && FLEXJIT_CACHE_DIR=/tmp/fo timeout 80 ./flexjit_main bench --suite ragged256.json --bwd-mode $m --json $L/old${m}_$round.jsonl > $L/old${m}_$round.log 2>&1
    FLEXJIT_CACHE_DIR=/tmp/fn timeout 80 ./flexjit bench --suite ragged256.json --bwd-mode $m --json $L/new${m}_$round.jsonl > $L/new${m}_$round.log 2>&1
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
left=$(( 470 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && PYTHONUNBUFFERED=1 timeout $left python3 peers.py --no-sdpa --suite ragged256.json > $L/flex.jsonl 2> $L/flex.err
python3 - "$L" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/*.jsonl')):
    kind=f.split('/')[-1].replace('.jsonl','')
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if d.get('bwd_ms') is not None: print(f"{d.get('name',''):24s} {kind:18s} {d.get('system','')} fwd_ms {d.get('fwd_ms') or 0:.3f} bwd_ms {d['bwd_ms']:.3f} TF/s {d.get('bwd_tflops') or 0:.1f} {d.get('bwd_configs','')} {d.get('bwd_mode','')}")
PY
(cd /tmp && tar czf $out/zt5_logs.tar.gz zt5l)
echo "total $(( $(date +%s) - t0 )) s"
