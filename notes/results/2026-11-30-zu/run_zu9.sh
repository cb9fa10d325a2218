#!/usr/bin/env bash
# (zu) call 9: dQ added from registers with four-column reductions (red.global.add.v4.f32 after a
# lane swap: half the L2 operations of zu1's v2 form, no shared memory at all) against main and
# the v2 form; then two backward tests on the v4 form.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zu9}; L=/tmp/zu9l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
P=noop_d128,gqa_causal_d128,noop_d64
i=0
for v in main direct4 direct1 direct4 main; do
  i=$((i+1))
  if [ $v = main ]; then unset FLEXJIT_TEMPLATE_DIR; else export FLEXJIT_TEMPLATE_DIR=$PWD/t_$v; fi
  FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 60 ./flexjit bench --bwd-mode fast --suite suite.json --only $P --json $L/${v}_$i.jsonl > $L/${v}_$i.log 2>&1
  echo "$v $i rc=$? $(( $(date +%s) - t0 )) s"
done
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
    print(f'{n:20s}', '  '.join(f'{v}: '+'/'.join(f'{x:.1f}' for x in t[(n,v)]) for v in ('main','direct4','direct1')))
PY
export FLEXJIT_TEMPLATE_DIR=$PWD/t_direct4
FLEXJIT_CACHE_DIR=/tmp/ft timeout 50 ./gpu_test_attention --gtest_filter='BwdGpu.Gqa8To1AndBshd:BwdGpu.OddLengthsAndDifferentLengths' > $L/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED  \] [A-Z]|^\[  PASSED|^\[       OK' $L/tests.log | head -4
(cd /tmp && tar czf $out/zu9_logs.tar.gz zu9l)
echo "total $(( $(date +%s) - t0 )) s"
