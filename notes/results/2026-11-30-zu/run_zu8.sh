#!/usr/bin/env bash
# (zu) call 8: the landed rule (Q in registers at head dim 128 for unmodified scores without a
# mask) against main's binary, forward only, three rounds alternating, on noop shapes and causal
# (same kernel, control); then the new GPU test and compute-sanitizer memcheck / racecheck on it.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zu8}; L=/tmp/zu8l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for round in 1 2 3; do
  for v in old new; do
    [ $round = 2 ] && v=$([ $v = old ] && echo new || echo old)
    b=./flexjit; [ $v = old ] && b=./flexjit_main
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $b bench --no-bwd --suite noop.json --json $L/${v}_$round.jsonl > $L/${v}_$round.log 2>&1
    echo "$v $round rc=$? $(( $(date +%s) - t0 )) s"
  done
done
python3 - "$L" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1]+'/*.jsonl')):
    kind=f.split('/')[-1].rsplit('_',1)[0]
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append(d['fwd_tflops'])
for n in sorted(set(k[0] for k in t)):
    o=t[(n,'old')]; w=t[(n,'new')]
    print(f'{n:20s} old: '+'/'.join(f'{x:.1f}' for x in o)+'  new: '+'/'.join(f'{x:.1f}' for x in w)+f'  x{statistics.median(w)/statistics.median(o):.3f}')
PY
F='FwdGpu.WarpSpecializedHeadDim128QInRegisters'
FLEXJIT_CACHE_DIR=/tmp/ft timeout 100 ./gpu_test_attention --gtest_filter="$F:FwdGpu.WarpSpecializedModsTwoConsumers" > $L/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED  \] [A-Z]|^\[  PASSED|^\[       OK' $L/tests.log | head; grep -hE 'Failure|Which is|Expected' $L/tests.log | head -6
for tool in memcheck racecheck; do
  FLEXJIT_CACHE_DIR=/tmp/ft timeout 150 compute-sanitizer --tool $tool --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter="$F" > $L/$tool.log 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s"
  grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $L/$tool.log | head -3
done
(cd /tmp && tar czf $out/zu8_logs.tar.gz zu8l)
echo "total $(( $(date +%s) - t0 )) s"
