#!/bin/bash
# zzb6: TMA maps' L2 promotion (probe knob FLEXJIT_TMA_L2_PROMOTION) on decode's TMA tiles and the forward.
cd "$(dirname "$0")"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; W=/tmp/w6; mkdir -p $O $W
for r in 1 2; do
for pr in 256 128 64 none; do
  FLEXJIT_TMA_L2_PROMOTION=$pr ./flexjit bench --suite dec.json --only decode_b16_kv32k_paged64,decode_ragged_b32_paged64 --json $W/dp_${pr}_$r.jsonl > /dev/null 2>&1
  FLEXJIT_TMA_L2_PROMOTION=$pr ./flexjit bench --suite dec.json --only decode_b16_kv32k,decode_gqa7_b8_kv64k --decode-config m16n64w4s3t --json $W/dc_${pr}_$r.jsonl > /dev/null 2>&1
done
for pr in 256 128 none; do
  FLEXJIT_TMA_L2_PROMOTION=$pr ./flexjit bench --suite fwd.json --no-bwd --json $W/f_${pr}_$r.jsonl > /dev/null 2>&1
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
        if 'name' in r: t[(r['name'], tag.split('_',1)[1])].append(r.get('fwd_gbps') if r.get('kind')=='decode' else r.get('fwd_tflops'))
for k in sorted(t): print(k[0], k[1], t[k])
PY
tar czf $O/zzb6.tar.gz -C $W .
