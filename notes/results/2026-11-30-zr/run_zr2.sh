#!/usr/bin/env bash
# (zr) call 2: the rows-only overhang pass in the ws forward. Tests, then A/B against main's templates.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zr2}; mkdir -p $out
export FLEXJIT_AUTOTUNE=off
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 260 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecialized*:FwdGpu.WideWarpSpecialized*:FwdGpu.OddLengths:FwdGpu.DifferentQueryAndKeyLengths:FwdGpu.MaskColumnValues*' > $out/tests.log 2>&1
echo "tests rc=$?"; grep -E '^\[  (FAILED|PASSED) |OK \]|FAILED \]' $out/tests.log | tail -30
d64="noop_d64,noop_d64_s4608,noop_d64_s8192,noop_d64_s2000,softcap_d64"
for round in 1 2; do
  for v in old new; do
    if [ $v = old ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/old_templates; else unset FLEXJIT_TEMPLATE_DIR; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v ./flexjit bench --no-bwd --suite ab.json --only $d64 --config m192n128w12s2ws --json $out/m192_${v}_$round.jsonl > /dev/null 2>&1
    FLEXJIT_CACHE_DIR=/tmp/fc_$v ./flexjit bench --no-bwd --suite ab.json --json $out/def_${v}_$round.jsonl > /dev/null 2>&1
  done
done
unset FLEXJIT_TEMPLATE_DIR
python3 - "$out" <<'PY'
import json,sys,glob,collections
out=sys.argv[1]
t=collections.defaultdict(list)
for f in sorted(glob.glob(out+'/*.jsonl')):
    kind,v,r=f.split('/')[-1][:-6].split('_')
    for l in open(f):
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind,v)].append((d['fwd_tflops'],d.get('fwd_config')))
for k in sorted(t): print(k, t[k])
PY
