#!/usr/bin/env bash
# (zt) call 3: per-sequence lengths in the fast backward's warp-specialised dK/dV kernel. Its GPU
# tests (every SeqLensGpu test, the random ragged problems), memcheck and synccheck on the new
# test, then ragged.json forward + backward: main (flexjit_main, 'g' dK/dV for ragged calls)
# against this build (ws), two rounds, and FlexAttention (Triton) beside them.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zt3}; L=/tmp/zt3l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/ft timeout 280 ./gpu_test_attention --gtest_filter='SeqLensGpu.*:RandomProblemsGpu.*' > $L/tests.log 2>&1; echo "tests rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fm timeout 200 compute-sanitizer --tool memcheck --kernel-name kns=bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedBackward' > $L/memcheck.log 2>&1; echo "memcheck rc=$?" >> $L/rc;
 FLEXJIT_CACHE_DIR=/tmp/fm timeout 120 compute-sanitizer --tool synccheck --kernel-name kns=bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedBackward' > $L/synccheck.log 2>&1; echo "synccheck rc=$?" >> $L/rc) &
wait
cat $L/rc; grep -E '^\[       OK|^\[  FAILED  \] [A-Z]' $L/tests.log | head -30; grep -hE 'Failure|Which is|Expected|seed' $L/tests.log | head -20; grep -hE 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $L/memcheck.log $L/synccheck.log
echo "tests $(( $(date +%s) - t0 )) s"
for round in 1 2; do
  FLEXJIT_CACHE_DIR=/tmp/fo timeout 60 ./flexjit_main bench --suite ragged.json --json $L/old_$round.jsonl > $L/old_$round.log 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fn timeout 60 ./flexjit bench --suite ragged.json --json $L/new_$round.jsonl > $L/new_$round.log 2>&1
done
echo "bench $(( $(date +%s) - t0 )) s"
left=$(( 420 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && PYTHONUNBUFFERED=1 timeout $left python3 peers.py --no-sdpa --suite ragged.json > $L/flex.jsonl 2> $L/flex.err
python3 - "$L" <<'PY'
import json,sys,glob,collections
t=collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1]+'/*.jsonl')):
    kind=f.split('/')[-1].rsplit('_',1)[0] if not f.split('/')[-1].startswith('flex') else 'flex'
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if d.get('system') in ('flexjit','flex',None) or kind=='flex':
            t[(d.get('name'),kind,d.get('system'))].append(d)
for k in sorted(t, key=str):
    for d in t[k]:
        print(k[0], k[1], k[2], 'fwd_ms', d.get('fwd_ms'), 'bwd_ms', d.get('bwd_ms'), 'bwd_tflops', d.get('bwd_tflops'), d.get('bwd_configs',''), d.get('bwd_mode',''))
PY
(cd /tmp && tar czf $out/zt3_logs.tar.gz zt3l)
echo "total $(( $(date +%s) - t0 )) s"
