#!/bin/bash
# zzb1: paged decode: the page table read a tile ahead (tmpl_new) against main (tmpl_old); configs and splits; peers.
cd "$(dirname "$0")"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $O/gpu.txt
P=decode_b16_kv32k,decode_b16_kv32k_paged64,decode_ragged_b32_paged64,decode_gqa7_b8_kv64k
for round in 1 2; do
  for t in old new; do
    FLEXJIT_TEMPLATE_DIR=tmpl_$t ./flexjit bench --suite dec.json --only $P --json $O/ab_${t}_$round.jsonl > $O/ab_${t}_$round.txt 2>&1
  done
done
# configs and splits on the paged row (main's templates)
for c in m16n64w4s3t m16n64w4s4t m16n128w4s2t m16n64w4s6t m16n128w8s3 m16n128w4s3t; do
  for tt in old new; do
  FLEXJIT_TEMPLATE_DIR=tmpl_$tt ./flexjit bench --suite dec.json --only decode_b16_kv32k_paged64,decode_ragged_b32_paged64 --decode-config $c --json $O/cfg_${c}_$tt.jsonl > $O/cfg_${c}_$tt.txt 2>&1
  done
done
for s in 2 4 11 33; do
  FLEXJIT_DECODE_SPLITS=$s FLEXJIT_TEMPLATE_DIR=tmpl_new ./flexjit bench --suite dec.json --only decode_b16_kv32k_paged64 --json $O/split_$s.jsonl > $O/split_$s.txt 2>&1
done
timeout 200 python3 peers.py --suite dec.json --only $P,decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k > $O/peers.jsonl 2> $O/peers.err
FLEXJIT_TEMPLATE_DIR=tmpl_new ./flexjit bench --suite dec.json --json $O/all_new.jsonl > $O/all_new.txt 2>&1
FLEXJIT_TEMPLATE_DIR=tmpl_new timeout 150 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $O/test_decode.txt 2>&1; echo "tests rc=$?" >> $O/test_decode.txt
tail -3 $O/test_decode.txt
for f in $O/ab_*.jsonl $O/cfg_*.jsonl $O/split_*.jsonl; do echo "== $f"; python3 -c "
import json,sys
for l in open('$f'):
  try: r=json.loads(l)
  except: continue
  print(r.get('name'), r.get('fwd_gbps'), r.get('config', r.get('decode_config','')))
"; done
grep -h fwd_gbps $O/peers.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
  r=json.loads(l); print(r['system'], r['name'], r.get('fwd_gbps'))
"
