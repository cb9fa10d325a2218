#!/usr/bin/env bash
# (zt) call 4: the deterministic mode's ordered dK/dV kernel with per-sequence lengths. Its GPU
# tests (both ws backward tests, the other SeqLensGpu backward ones, the random ragged problems),
# memcheck and synccheck on the new test, then ragged.json's deterministic backward, main
# (flexjit_main: dQ kernel + 'g' dK/dV) against this build (ordered ws), two rounds, and this
# build's fast mode; and ragged d256 (fast and deterministic, this build: no ws dK/dV there).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zt4}; L=/tmp/zt4l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/ft timeout 250 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecialized*Backward:SeqLensGpu.DefaultConfigs*:SeqLensGpu.WgmmaLargeTiles:RandomProblemsGpu.Ragged*' > $L/tests.log 2>&1; echo "tests rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fm timeout 200 compute-sanitizer --tool memcheck --kernel-name kns=bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedOrderedBackward' > $L/memcheck.log 2>&1; echo "memcheck rc=$?" >> $L/rc;
 FLEXJIT_CACHE_DIR=/tmp/fm timeout 100 compute-sanitizer --tool synccheck --kernel-name kns=bwd_dkdv --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedOrderedBackward' > $L/synccheck.log 2>&1; echo "synccheck rc=$?" >> $L/rc) &
wait
cat $L/rc; grep -E '^\[       OK|^\[  FAILED  \] [A-Z]' $L/tests.log | head -30; grep -hE 'Failure|Which is|Expected|seed' $L/tests.log | head -20; grep -hE 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $L/memcheck.log $L/synccheck.log
echo "tests $(( $(date +%s) - t0 )) s"
for round in 1 2; do
  FLEXJIT_CACHE_DIR=/tmp/fo timeout 60 ./flexjit_main bench --suite ragged.json --bwd-mode deterministic --json $L/olddet_$round.jsonl > $L/olddet_$round.log 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fn timeout 60 ./flexjit bench --suite ragged.json --bwd-mode deterministic --json $L/newdet_$round.jsonl > $L/newdet_$round.log 2>&1
done
FLEXJIT_CACHE_DIR=/tmp/fn timeout 60 ./flexjit bench --suite ragged.json --json $L/newfast_1.jsonl > $L/newfast_1.log 2>&1
for m in fast deterministic; do
  FLEXJIT_CACHE_DIR=/tmp/fn timeout 90 ./flexjit bench --suite ragged256.json --bwd-mode $m --json $L/d256$m.jsonl > $L/d256$m.log 2>&1
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - "$L" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/*.jsonl')):
    kind=f.split('/')[-1].replace('.jsonl','')
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'bwd_ms' in d: print(f"{d['name']:28s} {kind:10s} bwd_ms {d['bwd_ms']:.3f} TF/s {d['bwd_tflops']:.1f} {d.get('bwd_configs','')} {d.get('bwd_mode','')}")
PY
(cd /tmp && tar czf $out/zt4_logs.tar.gz zt4l)
echo "total $(( $(date +%s) - t0 )) s"
