#!/usr/bin/env bash
# (zs) call 4: ragged calls now default to the warp-specialised forward. SeqLensGpu.* (d256 ws case,
# ws defaults), RandomProblemsGpu.* (padded and ragged forward + backward), memcheck and synccheck
# on the default-config ragged test; ragged.json with the defaults beside FlexAttention (peers.py:
# its mask drops keys past each length; compare milliseconds, its TF/s count other work).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zs4}; L=/tmp/zs4l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/fa timeout 250 ./gpu_test_attention --gtest_filter='SeqLensGpu.*' > $L/tests.log 2>&1; echo "seqlens rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fb timeout 250 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.*' > $L/random.log 2>&1; echo "random rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fm timeout 250 compute-sanitizer --tool memcheck --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism' > $L/memcheck.log 2>&1; echo "memcheck rc=$?" >> $L/rc;
 FLEXJIT_CACHE_DIR=/tmp/fm timeout 200 compute-sanitizer --tool synccheck --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism' > $L/synccheck.log 2>&1; echo "synccheck rc=$?" >> $L/rc) &
wait
echo "tests $(( $(date +%s) - t0 )) s"; cat $L/rc
grep -hE '^\[       OK|^\[  FAILED  \] [A-Z]' $L/tests.log $L/random.log | head -20
grep -hE 'Failure|Expected|Which is|expected' $L/tests.log $L/random.log | head -30
grep -hE 'ERROR SUMMARY' $L/memcheck.log $L/synccheck.log
for round in 1 2; do
  FLEXJIT_CACHE_DIR=/tmp/fc timeout 60 ./flexjit bench --no-bwd --suite ragged.json --json $L/flexjit_$round.jsonl > /dev/null 2>&1
done
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 30 ] && PYTHONUNBUFFERED=1 timeout $left python3 peers.py --no-bwd --no-sdpa --suite ragged.json > $L/peers.jsonl 2> $L/peers.err
python3 - "$L" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.jsonl'):
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'fwd_ms' in d: t[(d['name'],d['system'])].append((d['fwd_ms'], d['fwd_tflops'], d.get('fwd_config','')))
names=sorted({k[0] for k in t})
for n in names:
    f=t.get((n,'flexjit'),[]); x=t.get((n,'flex'),[])
    fm=statistics.median([a[0] for a in f]) if f else 0; xm=x[0][0] if x else 0
    print(f'{n:26s} flexjit {fm:8.3f} ms {statistics.median([a[1] for a in f]) if f else 0:6.1f} TF/s {f[0][2] if f else ""}   flex {xm:8.3f} ms   flex/flexjit time {xm/fm if fm else 0:5.2f}')
PY
tail -2 $L/peers.err
(cd /tmp && tar czf $out/zs4_logs.tar.gz zs4l)
echo "total $(( $(date +%s) - t0 )) s"
