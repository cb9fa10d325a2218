#!/bin/bash
# zzb7: decode's TMA maps at 128-byte L2 promotion and the contiguous TMA default: tests, memcheck, bench beside the peers.
cd "$(dirname "$0")"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; W=/tmp/w7; mkdir -p $O $W
timeout 200 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $W/decode_tests.txt 2>&1; echo "rc=$?" >> $W/decode_tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=' $W/decode_tests.txt
timeout 100 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter='DecodeGpu.HopperContiguousDefaultReadsThroughTma' > $W/memcheck.txt 2>&1; echo "rc=$?" >> $W/memcheck.txt
grep -E 'ERROR SUMMARY|PASSED|FAILED|rc=' $W/memcheck.txt
./flexjit bench --suite dec.json --json $W/b1.jsonl > $W/b1.txt 2>&1
timeout 100 python3 peers.py --suite dec.json --only decode_b16_kv32k,decode_b16_kv32k_paged64,decode_gqa7_b8_kv64k > $W/peers.jsonl 2> $W/peers.err
./flexjit bench --suite dec.json --json $W/b2.jsonl > $W/b2.txt 2>&1
cat $W/b1.txt | tail -8
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; t=collections.defaultdict(list)
for f in ['b1','b2','peers']:
    for l in open(f'{W}/{f}.jsonl'):
        try: r=json.loads(l)
        except: continue
        if 'name' in r: t[(r['name'], r.get('system'))].append((r.get('fwd_gbps'), r.get('fwd_config','')))
for k in sorted(t): print(k, t[k])
PY
tar czf $O/zzb7.tar.gz -C $W .
