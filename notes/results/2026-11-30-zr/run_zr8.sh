#!/usr/bin/env bash
# (zr) call 8: d128 synchronous forward tiles for ragged calls: m128n128 (one CTA per SM), m128n64 one CTA, m128n64 two CTAs.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zr8}; mkdir -p $out
export FLEXJIT_AUTOTUNE=off
for round in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fc_m ./flexjit bench --no-bwd --suite ab8.json --config m128n128w8s2g --json $out/n128_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fc_m ./flexjit bench --no-bwd --suite ab8.json --config m128n64w8s2g --json $out/n64one_$round.jsonl > /dev/null 2>&1
  FLEXJIT_TEMPLATE_DIR=$PWD/lb_templates FLEXJIT_CACHE_DIR=/tmp/fc_lb ./flexjit bench --no-bwd --suite ab8.json --config m128n64w8s2g --json $out/n64two_$round.jsonl > /dev/null 2>&1
done
FLEXJIT_CACHE_DIR=/tmp/fc_m ./flexjit bench --no-bwd --suite ab8.json --json $out/default_1.jsonl > /dev/null 2>&1
python3 - "$out" <<'PY'
import json,sys,glob,collections,statistics
out=sys.argv[1]
t=collections.defaultdict(list)
for f in sorted(glob.glob(out+'/*.jsonl')):
    kind=f.split('/')[-1][:-6].split('_')[0]
    for l in open(f):
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append((d['fwd_tflops'], d.get('fwd_config')))
for k in sorted(t): print(f'{k[0]:22s} {k[1]:8s}', ' '.join(f'{x[0]:6.1f}' for x in t[k]), ' median %.1f'%statistics.median([x[0] for x in t[k]]), t[k][0][1])
PY
