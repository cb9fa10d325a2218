#!/usr/bin/env bash
# (zu) call 5: S_AHEAD (the d128 dK/dV kernel issues the next tile's Sᵀ at the end of each tile,
# between dQ's staging stores and their fence) against main (t_old: the same templates with
# FLEXJIT_S_AHEAD 0, SASS-identical to main), fast and deterministic backward, rounds alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zu5}; L=/tmp/zu5l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
P=noop_d128,causal_d128,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,long_causal_d128
for round in 1 2; do
  for v in old new; do
    [ $round = 2 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/t_old; else unset FLEXJIT_TEMPLATE_DIR; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 ./flexjit bench --bwd-mode fast --suite suite.json --only $P --json $L/fast_${v}_$round.jsonl > $L/fast_${v}_$round.log 2>&1
    echo "fast $v $round rc=$? $(( $(date +%s) - t0 )) s"
  done
done
for v in old new; do
  if [ $v = old ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/t_old; else unset FLEXJIT_TEMPLATE_DIR; fi
  FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 ./flexjit bench --bwd-mode deterministic --suite suite.json --only noop_d128,causal_d128,gqa_causal_d128,document_causal_d128 --json $L/det_${v}_1.jsonl > $L/det_${v}_1.log 2>&1
  echo "det $v rc=$? $(( $(date +%s) - t0 )) s"
done
unset FLEXJIT_TEMPLATE_DIR
python3 - "$L" <<'PY'
import json,sys,glob,collections
t=collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1]+'/*.jsonl')):
    mode,kind,_=f.split('/')[-1].split('_')
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'bwd_tflops' in d: t[(mode,d['name'],kind)].append(d['bwd_tflops'])
for m in ('fast','det'):
  for n in sorted(set(k[1] for k in t if k[0]==m)):
    o=t[(m,n,'old')]; w=t[(m,n,'new')]
    r=(sum(w)/len(w))/(sum(o)/len(o)) if o and w else 0
    print(f'{m:5s} {n:24s} old: '+'/'.join(f'{x:.1f}' for x in o)+'  new: '+'/'.join(f'{x:.1f}' for x in w)+f'  x{r:.3f}')
PY
(cd /tmp && tar czf $out/zu5_logs.tar.gz zu5l)
echo "total $(( $(date +%s) - t0 )) s"
