#!/usr/bin/env bash
# (zs) call 3: per-sequence lengths on the warp-specialised forward. SeqLensGpu.* (the new
# WarpSpecializedForward, every test now with NaN padding), memcheck and racecheck on the ws
# forward's kernels, then ragged.json beside the synchronous defaults, three rounds.
# Stage in .gpu/<s>/: gpu_test_attention, flexjit (strip -o), ragged.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zs3}; L=/tmp/zs3l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/fa timeout 280 ./gpu_test_attention --gtest_filter='SeqLensGpu.*' > $L/tests.log 2>&1; echo "tests rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fm timeout 280 compute-sanitizer --tool memcheck --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedForward' > $L/memcheck.log 2>&1; echo "memcheck rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fr timeout 280 compute-sanitizer --tool racecheck --kernel-name kns=attention_fwd --print-limit 200 ./gpu_test_attention --gtest_filter='SeqLensGpu.WarpSpecializedForward' > $L/racecheck.log 2>&1; echo "racecheck rc=$?" >> $L/rc) &
wait
echo "tests $(( $(date +%s) - t0 )) s"; cat $L/rc
grep -E '^\[       OK|^\[  FAILED  \] [A-Z]' $L/tests.log | head -20
grep -E 'Failure|error|Expected|Which is|expected' $L/tests.log | head -30
grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' $L/memcheck.log $L/racecheck.log
grep -A2 -E 'Error: Race|Hazard' $L/racecheck.log | head -12
for round in 1 2 3; do
  [ $(( $(date +%s) - t0 )) -gt 500 ] && break
  FLEXJIT_CACHE_DIR=/tmp/fb timeout 60 ./flexjit bench --no-bwd --suite ragged.json --json $L/default_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fb timeout 60 ./flexjit bench --no-bwd --suite ragged.json --config m128n128w8s2ws --json $L/ws_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fb timeout 40 ./flexjit bench --no-bwd --suite ragged.json --only ragged_noop_d64 --config m192n128w12s2ws --json $L/ws192_$round.jsonl > /dev/null 2>&1
done
python3 - "$L" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.jsonl'):
    kind=f.split('/')[-1].rsplit('_',1)[0]
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append((d['fwd_tflops'], d['fwd_config']))
for k in sorted(t): print(f'{k[0]:24s} {k[1]:8s}', ' '.join(f'{x[0]:6.1f}' for x in t[k]), ' median %.1f'%statistics.median([x[0] for x in t[k]]), t[k][0][1])
PY
(cd /tmp && tar czf $out/zs3_logs.tar.gz zs3l)
echo "total $(( $(date +%s) - t0 )) s"
