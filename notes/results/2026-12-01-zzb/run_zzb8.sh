#!/bin/bash
# zzb8: the TMA maps' L2 promotion (zzb6's probe binary) on the long problems, forward and one backward.
cd "$(dirname "$0")"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; W=/tmp/w8; mkdir -p $O $W
for r in 1 2; do for pr in 256 128; do
  FLEXJIT_TMA_L2_PROMOTION=$pr timeout 60 ./flexjit bench --suite long.json --no-bwd --json $W/f_${pr}_$r.jsonl > /dev/null 2>&1
done; done
for pr in 256 128; do
  FLEXJIT_TMA_L2_PROMOTION=$pr timeout 60 ./flexjit bench --suite long.json --only long_causal_d128 --json $W/b_${pr}_1.jsonl > /dev/null 2>&1
done
python3 - $W <<'PY'
import json,glob,sys,collections
W=sys.argv[1]; t=collections.defaultdict(list)
for f in sorted(glob.glob(W+'/*.jsonl')):
    tag=f.split('/')[-1].rsplit('.',1)[0][:-2]
    for l in open(f):
        try: r=json.loads(l)
        except: continue
        if 'name' in r: t[(r['name'], tag)].append((r.get('fwd_tflops'), r.get('bwd_tflops')))
for k in sorted(t): print(k[0], k[1], t[k])
PY
tar czf $O/zzb8.tar.gz -C $W .
