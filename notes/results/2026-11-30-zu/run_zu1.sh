#!/usr/bin/env bash
# (zu) call 1: dQ added from the consumers' registers (red.global.add.v2.f32, no staging, no
# writer: t_direct) and with no dQ at all (timing-only upper bound: t_nodq) against main's
# templates, fast backward. Kernels where DQ_DIRECT applies: no first stores (unmasked, GQA, d64).
# Tests with t_direct first.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zu1}; L=/tmp/zu1l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
FLEXJIT_TEMPLATE_DIR=$PWD/t_direct FLEXJIT_CACHE_DIR=/tmp/ft timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.ShortSequencesWithAnOddGqaRatio:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdv*:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:SeqLensGpu.WarpSpecializedBackward' > $L/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED  \] [A-Z]|^\[  PASSED' $L/tests.log | head; grep -hE 'Failure|Which is|Expected' $L/tests.log | head -10
P=noop_d128,gqa_causal_d128,noop_d64,causal_d64,causal_d128
for round in 1 2; do
  for v in main direct nodq; do
    if [ $v = main ]; then unset FLEXJIT_TEMPLATE_DIR; else export FLEXJIT_TEMPLATE_DIR=$PWD/t_$v; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./flexjit bench --bwd-mode fast --suite suite.json --only $P --json $L/${v}_$round.jsonl > $L/${v}_$round.log 2>&1
    echo "$v $round rc=$? $(( $(date +%s) - t0 )) s"
  done
done
unset FLEXJIT_TEMPLATE_DIR
python3 - "$L" <<'PY'
import json,sys,glob,collections
t=collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1]+'/*.jsonl')):
    kind=f.split('/')[-1].rsplit('_',1)[0]
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'bwd_tflops' in d: t[(d['name'],kind)].append(d['bwd_tflops'])
for n in sorted(set(k[0] for k in t)):
    print(f'{n:22s}', '  '.join(f'{v}: '+'/'.join(f'{x:.1f}' for x in t[(n,v)]) for v in ('main','direct','nodq')))
PY
(cd /tmp && tar czf $out/zu1_logs.tar.gz zu1l)
echo "total $(( $(date +%s) - t0 )) s"
