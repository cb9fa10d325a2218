#!/usr/bin/env bash
# (zt) call 2: two Q buffers in the warp-specialised forward. The ws forward GPU tests on the new
# build, then the suite's forward, main (flexjit_main, 52c6dab) against the new build, three
# rounds in alternating order.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zt2}; L=/tmp/zt2l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/ft timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecialized*:FwdGpu.WideWarpSpecialized*:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks:SeqLensGpu.WarpSpecializedForward:FwdGpu.SuiteMods' > $L/tests.log 2>&1; echo "tests rc=$?"
grep -E '^\[  FAILED  \] [A-Z]|^\[  PASSED' $L/tests.log | head -20; grep -hE 'Failure|Which is|Expected' $L/tests.log | head
echo "tests $(( $(date +%s) - t0 )) s"
for round in 1 2 3; do
  if [ $round = 2 ]; then order="new main"; else order="main new"; fi
  for v in $order; do
    b=./flexjit; [ $v = main ] && b=./flexjit_main
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $b bench --no-bwd --suite suite.json --json $L/${v}_$round.jsonl > $L/${v}_$round.log 2>&1
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
    a=statistics.median(t[(n,'main')]); b=statistics.median(t[(n,'new')])
    print(f'{n:28s} main', '/'.join(f'{x:.1f}' for x in t[(n,'main')]), ' new', '/'.join(f'{x:.1f}' for x in t[(n,'new')]), f' {b/a:.3f}')
PY
(cd /tmp && tar czf $out/zt2_logs.tar.gz zt2l)
echo "total $(( $(date +%s) - t0 )) s"
