#!/usr/bin/env bash
# (zr) call 3: d64 unmasked configs across lengths (new templates), and old/new on the crossing rows at d128/d64.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zr3}; mkdir -p $out
export FLEXJIT_AUTOTUNE=off
d64="noop_d64_s512,noop_d64_s1024,noop_d64_s2048,noop_d64_s4096,noop_d64_s8192,noop_d64_s16384,gqa_noop_d64,alibi_d64,softcap_d64,noop_d64_q1000"
cross="noop_d128_s4000,causal_d128_s4000,noop_d128_q1000,causal_d64_s4000"
for round in 1 2 3; do
  for c in m192n128w12s2ws m128n128w8s2g m128n128w8s2ws; do
    FLEXJIT_CACHE_DIR=/tmp/fc_new ./flexjit bench --no-bwd --suite ab3.json --only $d64 --config $c --json $out/cfg_${c}_$round.jsonl > /dev/null 2>&1
  done
  for v in old new; do
    if [ $v = old ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/old_templates; else unset FLEXJIT_TEMPLATE_DIR; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v ./flexjit bench --no-bwd --suite ab3.json --only $cross --json $out/x_${v}_$round.jsonl > /dev/null 2>&1
  done
  unset FLEXJIT_TEMPLATE_DIR
done
python3 - "$out" <<'PY'
import json,sys,glob,collections,statistics
out=sys.argv[1]
t=collections.defaultdict(list)
for f in sorted(glob.glob(out+'/*.jsonl')):
    parts=f.split('/')[-1][:-6].split('_')
    kind='_'.join(parts[:-1])
    for l in open(f):
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append(d['fwd_tflops'])
for k in sorted(t): print(f'{k[0]:22s} {k[1]:24s}', ' '.join(f'{x:6.1f}' for x in t[k]), ' median %.1f'%statistics.median(t[k]))
PY
