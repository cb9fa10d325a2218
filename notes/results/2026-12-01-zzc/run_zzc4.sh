#!/bin/bash
# zzc4: paged decode tiles m16n64w4s3t against the default m16n128w4s3t on the long rows (two rounds).
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; W=/tmp/w4; mkdir -p $O $W
for r in 1 2; do
  ./flexjit bench --suite dec.json --only decode_b16_kv32k_paged64,decode_ragged_b32_paged64 --json $W/d_r$r.jsonl > /dev/null 2>&1
  ./flexjit bench --suite dec.json --only decode_b16_kv32k_paged64,decode_ragged_b32_paged64 --decode-config m16n64w4s3t --json $W/n64_r$r.jsonl > /dev/null 2>&1
  ./flexjit bench --suite small.json --only decode_b64_kv1k_paged16,decode_b8_kv2k_paged64,decode_b1_kv4k_paged16 --json $W/sd_r$r.jsonl > /dev/null 2>&1
  ./flexjit bench --suite small.json --only decode_b64_kv1k_paged16,decode_b8_kv2k_paged64,decode_b1_kv4k_paged16 --decode-config m16n64w4s3t --json $W/sn64_r$r.jsonl > /dev/null 2>&1
done
for f in $W/*.jsonl; do python3 -c "
import json,sys,os
for l in open('$f'):
    try: r=json.loads(l)
    except: continue
    if 'name' in r: print(os.path.basename('$f')[:-6], r['name'], r.get('fwd_gbps'), r.get('fwd_config'))
"; done
tar czf $O/zzc4.tar.gz -C $W .
