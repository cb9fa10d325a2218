#!/usr/bin/env bash
# (zu) call 2: where the dQ reductions' cost lies: t_noreduce stages dQ and hands the buffers back
# but issues no bulk reduction (timing only), beside main and t_nodq (no dQ at all).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zu3}; L=/tmp/zu3l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
P=noop_d128,gqa_causal_d128,noop_d64,causal_d64
for round in 1 2; do
  for v in main noreduce nofence nostore nodq; do
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
    print(f'{n:22s}', '  '.join(f'{v}: '+'/'.join(f'{x:.1f}' for x in t[(n,v)]) for v in ("main","noreduce","nofence","nostore","nodq")))
PY
(cd /tmp && tar czf $out/zu3_logs.tar.gz zu3l)
echo "total $(( $(date +%s) - t0 )) s"
