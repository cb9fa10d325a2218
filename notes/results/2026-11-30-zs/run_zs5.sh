#!/usr/bin/env bash
# (zs) call 5: d64 masked forwards on 192-row tiles reading 192-row tables (bench --mask-q-block
# 192), with and without the overlap inside each of the three warpgroups (tplov/: the OVERLAP gate
# lets three warpgroups overlap a mask that reads no buffer), against the 128-row default.
# Correctness first: the wide-tile GPU tests on tplov.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zs5}; L=/tmp/zs5l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_TEMPLATE_DIR=$PWD/tplov FLEXJIT_CACHE_DIR=/tmp/ft timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.WideWarpSpecialized*M192*:FwdGpu.WideWarpSpecializedOnePerShape:FwdGpu.WideWarpSpecializedWalksByTheBoundsOfItsOwnMask' > $L/tests.log 2>&1; echo "tests rc=$?" >> $L/rc)
cat $L/rc; grep -E '^\[       OK|^\[  FAILED  \] [A-Z]' $L/tests.log | head; echo "tests $(( $(date +%s) - t0 )) s"
for round in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fa timeout 60 ./flexjit bench --no-bwd --suite d64_masked.json --json $L/m128_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fa timeout 60 ./flexjit bench --no-bwd --suite d64_masked.json --config m192n128w12s2ws --mask-q-block 192 --json $L/m192_$round.jsonl > /dev/null 2>&1
  FLEXJIT_TEMPLATE_DIR=$PWD/tplov FLEXJIT_CACHE_DIR=/tmp/fb timeout 60 ./flexjit bench --no-bwd --suite d64_masked.json --config m192n128w12s2ws --mask-q-block 192 --json $L/m192ov_$round.jsonl > /dev/null 2>&1
done
python3 - "$L" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.jsonl'):
    kind=f.split('/')[-1].rsplit('_',1)[0]
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append((d['fwd_tflops'], d['fwd_config'], d.get('density')))
for k in sorted(t): print(f'{k[0]:22s} {k[1]:8s}', ' '.join(f'{x[0]:6.1f}' for x in t[k]), ' median %.1f'%statistics.median([x[0] for x in t[k]]), t[k][0][1], t[k][0][2])
PY
(cd /tmp && tar czf $out/zs5_logs.tar.gz zs5l)
echo "total $(( $(date +%s) - t0 )) s"
