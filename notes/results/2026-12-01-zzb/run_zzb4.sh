#!/bin/bash
# zzb4: cp.async decode configs (per-row page lookups) on the paged rows against the TMA default.
cd "$(dirname "$0")"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
P=decode_b16_kv32k_paged64,decode_ragged_b32_paged64
for r in 1 2; do
./flexjit bench --suite dec.json --only $P --json $W/def_$r.jsonl > /dev/null 2>&1
for c in m16n64w4s3 m16n64w4s4 m16n128w4s3 m16n128w4s2 m16n64w4s5; do
  ./flexjit bench --suite dec.json --only $P --decode-config $c --json $W/p_${c}_$r.jsonl > /dev/null 2>&1
done
done
python3 - $W <<'PY'
import json,glob,sys,collections
W=sys.argv[1]; t=collections.defaultdict(list)
for f in sorted(glob.glob(W+'/*.jsonl')):
    tag=f.split('/')[-1].rsplit('.',1)[0][:-2]
    for l in open(f):
        try: r=json.loads(l)
        except: continue
        if 'name' in r and r.get('fwd_gbps'): t[(r['name'], tag)].append(r['fwd_gbps'])
for k in sorted(t): print(k[0], k[1], t[k])
PY
tar czf $O/zzb4.tar.gz -C $W .
