#!/usr/bin/env bash
# (zt) call 1: upper bounds, timing only. t_noq: the producer loads Q only for a CTA's first work
# tile (what a second Q buffer could at most hide); t_noepi: the consumers skip O's store (the
# epilogue's share). Forward only, two rounds, FLEXJIT_TEMPLATE_DIR per variant.
set -u
cd "$(dirname "$0")"
L=/tmp/zt1l; mkdir -p $L ${OUT:-/tmp/zt1}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=noop_d128,causal_d128,sliding_window_d128,document_causal_d128,long_document_causal_d128,long_sliding_window_d128,noop_d64,causal_d64,gqa_causal_d128
for round in 1 2; do
  for v in main noq noepi; do
    if [ $v = main ]; then unset FLEXJIT_TEMPLATE_DIR; else export FLEXJIT_TEMPLATE_DIR=$PWD/t_$v; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 ./flexjit bench --no-bwd --suite suite.json --only $P --json $L/${v}_$round.jsonl > $L/${v}_$round.log 2>&1
    echo "$v $round rc=$? $(( $(date +%s) - t0 )) s"
  done
done
unset FLEXJIT_TEMPLATE_DIR
python3 - "$L" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1]+'/*.jsonl')):
    kind=f.split('/')[-1].rsplit('_',1)[0]
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append(d['fwd_tflops'])
names=sorted(set(k[0] for k in t))
for n in names:
    print(f'{n:28s}', '  '.join(f'{v}: '+'/'.join(f'{x:.1f}' for x in t[(n,v)]) for v in ('main','noq','noepi')))
PY
(cd /tmp && tar czf ${OUT:-/tmp/zt1}/zt1_logs.tar.gz zt1l)
echo "total $(( $(date +%s) - t0 )) s"
