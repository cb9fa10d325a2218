#!/usr/bin/env bash
# (zu) call 7: Q in registers in the d128 warp-specialised forward (S = Q K^T as an RS wgmma:
# 32 KB less shared-memory reads per key tile of two warpgroups), this build against main's
# binary (flexjit_main), forward only, three rounds alternating; then the ws forward tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zu7}; L=/tmp/zu7l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
P=noop_d128,causal_d128,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,long_causal_d128,long_document_causal_d128
for round in 1 2 3; do
  for v in old new; do
    [ $round = 2 ] && v=$([ $v = old ] && echo new || echo old)
    b=./flexjit; [ $v = old ] && b=./flexjit_main
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $b bench --no-bwd --suite suite.json --only $P --json $L/${v}_$round.jsonl > $L/${v}_$round.log 2>&1
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
    print(f'{n:28s} old: '+'/'.join(f'{x:.1f}' for x in o)+'  new: '+'/'.join(f'{x:.1f}' for x in w)+f'  x{statistics.median(w)/statistics.median(o):.3f}')
PY
FLEXJIT_CACHE_DIR=/tmp/ft timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedMods*:FwdGpu.WarpSpecializedShapesBf16:FwdGpu.WarpSpecializedFullyMaskedRows:FwdGpu.WarpSpecializedRowsPastTheQueriesEnd:FwdGpu.WarpSpecializedOnePerHeadDim:SeqLensGpu.WarpSpecializedForward:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks' > $L/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED  \] [A-Z]|^\[  PASSED|^\[       OK' $L/tests.log | head -20; grep -hE 'Failure|Which is|Expected' $L/tests.log | head -10
(cd /tmp && tar czf $out/zu7_logs.tar.gz zu7l)
echo "total $(( $(date +%s) - t0 )) s"
