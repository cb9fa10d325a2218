#!/bin/bash
# zzc5: the landing build (combine rewrite, programmatic launches, split count after rounding, 64-key
# paged tiles for short sequences in waves): decode GPU tests, memcheck, latency.py old/new, the
# paged rows new default against 128-key tiles, the decode suite old/new.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache PYTHONPATH=$g/../../python
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w5; mkdir -p $O $W
t0=$(date +%s)
timeout 220 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $W/decode_tests.txt 2>&1; echo "rc=$?" >> $W/decode_tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=' $W/decode_tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 150 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter='DecodeGpu.StepsThatRead*:DecodeGpu.HopperPagedDefault*' > $W/memcheck.txt 2>&1; echo "rc=$?" >> $W/memcheck.txt
grep -E 'ERROR SUMMARY|PASSED|FAILED|rc=' $W/memcheck.txt; echo "memcheck $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  FLEXJIT_LIBRARY=$g/libflexjit_old.so timeout 60 python3 ../../scripts/latency.py > $W/old_r$r.jsonl 2> $W/old_r$r.err
  FLEXJIT_LIBRARY=$g/libflexjit.so timeout 60 python3 ../../scripts/latency.py > $W/new_r$r.jsonl 2> $W/new_r$r.err
done
echo "latency $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  ./flexjit bench --suite waves.json --json $W/w_new_r$r.jsonl > /dev/null 2>&1
  ./flexjit bench --suite waves.json --decode-config m16n128w4s3t --json $W/w_n128_r$r.jsonl > /dev/null 2>&1
done
./flexjit_old bench --suite dec.json --json $W/d_old.jsonl > /dev/null 2>&1
./flexjit bench --suite dec.json --json $W/d_new.jsonl > /dev/null 2>&1
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $W <<'PY'
import json,sys,collections,glob,os
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for tag in ('old','new'):
    for r in (1,2):
        for l in open(f'{W}/{tag}_r{r}.jsonl'):
            o=json.loads(l)
            if 'system' in o: rows[(o['name'],o['system'])][tag].append((o.get('graph_us'), o.get('loop_us')))
for k,v in rows.items(): print(f"{k[0]:28s} {k[1]:30s} old {v['old']} new {v['new']}")
for f in sorted(glob.glob(f'{W}/[wd]_*.jsonl')):
    for l in open(f):
        try: r=json.loads(l)
        except: continue
        if 'name' in r: print(os.path.basename(f)[:-6], r['name'], r.get('fwd_gbps'), r.get('fwd_config'))
PY
tar czf $O/zzc5.tar.gz -C $W .
