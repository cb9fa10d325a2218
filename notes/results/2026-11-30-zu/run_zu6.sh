#!/usr/bin/env bash
# (zu) call 6: is the d128 dK/dV kernel bound by shared-memory bandwidth? An idle producer-group
# warp (warp 2) reads 0 / 16 / 32 KB of shared memory per tile, paced at one tile per 4000
# cycles (t_smemN; smem0 keeps the pacing loop only), against main. Fast backward.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zu6}; L=/tmp/zu6l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
P=noop_d128,causal_d128,gqa_causal_d128
for round in 1 2; do
  for v in main smem0 smem16 smem32; do
    if [ $v = main ]; then unset FLEXJIT_TEMPLATE_DIR; else export FLEXJIT_TEMPLATE_DIR=$PWD/t_$v; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 ./flexjit bench --bwd-mode fast --suite suite.json --only $P --json $L/${v}_$round.jsonl > $L/${v}_$round.log 2>&1
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
    print(f'{n:22s}', '  '.join(f'{v}: '+'/'.join(f'{x:.1f}' for x in t[(n,v)]) for v in ('main','smem0','smem16','smem32')))
PY
(cd /tmp && tar czf $out/zu6_logs.tar.gz zu6l)
echo "total $(( $(date +%s) - t0 )) s"
