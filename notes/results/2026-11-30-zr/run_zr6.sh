#!/usr/bin/env bash
# (zr) call 6: the synchronous 'g' forward at d64 with two CTAs per SM (__launch_bounds__(256, 2)) against one.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zr6}; mkdir -p $out
export FLEXJIT_AUTOTUNE=off
for round in 1 2 3; do
  for v in main lb; do
    if [ $v = lb ]; then export FLEXJIT_TEMPLATE_DIR=$PWD/lb_templates; else unset FLEXJIT_TEMPLATE_DIR; fi
    FLEXJIT_CACHE_DIR=/tmp/fc_$v ./flexjit bench --no-bwd --suite ab6.json --config m128n128w8s2g --json $out/${v}_$round.jsonl > $out/${v}_$round.log 2>&1
  done
done
unset FLEXJIT_TEMPLATE_DIR
FLEXJIT_CACHE_DIR=/tmp/fc_main ./flexjit bench --no-bwd --suite ab6.json --json $out/default.jsonl > /dev/null 2>&1
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
grep -h "spill\|error" $out/*.log | head -5
