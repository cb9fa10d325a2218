#!/bin/bash
# zzb3: decode configs and splits on the contiguous, GQA 7:1 and paged rows (main's kernels), peers around.
cd "$(dirname "$0")"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $W/gpu.txt
C=decode_b16_kv32k,decode_gqa7_b8_kv64k
P=decode_b16_kv32k_paged64,decode_ragged_b32_paged64
timeout 150 python3 peers.py --suite dec.json --only $C,$P > $W/peers1.jsonl 2> $W/peers1.err
for r in 1 2; do
./flexjit bench --suite dec.json --only $C,$P --json $W/def_$r.jsonl > /dev/null 2>&1
for c in m16n64w4s4 m16n64w4s2 m16n128w4s3 m16n128w4s2 m16n128w8s3 m16n32w2s4 m16n128w4s3t m16n128w4s2t m16n64w4s3t m16n64w4s2t; do
  ./flexjit bench --suite dec.json --only $C --decode-config $c --json $W/c_${c}_$r.jsonl > /dev/null 2>&1
done
for c in m16n128w4s2t m16n64w4s2t; do
  ./flexjit bench --suite dec.json --only $P --decode-config $c --json $W/p_${c}_$r.jsonl > /dev/null 2>&1
done
for s in 1 3 4 6; do
  FLEXJIT_DECODE_SPLITS=$s ./flexjit bench --suite dec.json --only $C --json $W/s_${s}_$r.jsonl > /dev/null 2>&1
done
done
timeout 150 python3 peers.py --suite dec.json --only $C,$P > $W/peers2.jsonl 2> $W/peers2.err
python3 - $W <<'PY'
import json,glob,sys,collections
W=sys.argv[1]; t=collections.defaultdict(list)
for f in sorted(glob.glob(W+'/*.jsonl')):
    tag=f.split('/')[-1].rsplit('.',1)[0]
    if tag[-2]=='_' and tag[-1] in '12': tag=tag[:-2]
    for l in open(f):
        try: r=json.loads(l)
        except: continue
        if 'name' in r and r.get('fwd_gbps'): t[(r['name'], r.get('system','flexjit') if 'peers' in tag else tag)].append(r['fwd_gbps'])
for k in sorted(t): print(k[0], k[1], t[k])
PY
tar czf $O/zzb3.tar.gz -C $W .
