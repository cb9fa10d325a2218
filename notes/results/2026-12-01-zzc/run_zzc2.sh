#!/bin/bash
# zzc2: the combine rewrite + programmatic dependent launches: decode GPU tests, memcheck,
# latency.py A/B (main's library, the new one, the new one with the decode kernel launched plainly),
# a split sweep on the new one, and the decode bandwidth rows old/new.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache PYTHONPATH=$g/../../python
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w2; mkdir -p $O $W
t0=$(date +%s)
timeout 200 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $W/decode_tests.txt 2>&1; echo "rc=$?" >> $W/decode_tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=' $W/decode_tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 120 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter='DecodeGpu.StepsThatRead*:DecodeGpu.LongSequencesSplit*' > $W/memcheck.txt 2>&1; echo "rc=$?" >> $W/memcheck.txt
grep -E 'ERROR SUMMARY|PASSED|FAILED|rc=' $W/memcheck.txt; echo "memcheck $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  FLEXJIT_LIBRARY=$g/libflexjit_old.so timeout 60 python3 ../../scripts/latency.py > $W/old_r$r.jsonl 2> $W/old_r$r.err
  FLEXJIT_LIBRARY=$g/libflexjit.so timeout 60 python3 ../../scripts/latency.py > $W/new_r$r.jsonl 2> $W/new_r$r.err
  FLEXJIT_PROBE_PLAIN_DECODE=1 FLEXJIT_LIBRARY=$g/libflexjit.so timeout 60 python3 ../../scripts/latency.py > $W/plain_r$r.jsonl 2> $W/plain_r$r.err
done
echo "latency $(( $(date +%s) - t0 )) s"
for s in 1 2 4 8 16; do FLEXJIT_DECODE_SPLITS=$s FLEXJIT_LIBRARY=$g/libflexjit.so timeout 40 python3 sweep.py >> $W/sweep.jsonl 2>> $W/sweep.err; done
echo "sweep $(( $(date +%s) - t0 )) s"
./flexjit_old bench --suite dec.json --json $W/bold.jsonl > $W/bold.txt 2>&1
./flexjit bench --suite dec.json --json $W/bnew.jsonl > $W/bnew.txt 2>&1
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for tag in ('old','new','plain'):
    for r in (1,2):
        try: lines=open(f'{W}/{tag}_r{r}.jsonl').readlines()
        except: continue
        for l in lines:
            o=json.loads(l)
            if 'system' not in o: continue
            key=(o['name'], o['system'])
            rows[key][tag].append((o.get('loop_us'), o.get('graph_us')))
for k,v in rows.items():
    if k[1].startswith('SDPA') and 'old' in v: print(f"{k[0]:28s} {k[1]:30s} graph {[x[1] for x in v['old']+v['new']]}"); continue
    print(f"{k[0]:28s} {k[1]:30s} " + "  ".join(f"{t}: graph {[x[1] for x in v[t]]} loop {[x[0] for x in v[t]]}" for t in ('old','new','plain')))
for l in open(f'{W}/sweep.jsonl'):
    r=json.loads(l); print('sweep', r['name'], r['splits'], r.get('loop_us'), r.get('graph_us'))
for f in ('bold','bnew'):
    for l in open(f'{W}/{f}.jsonl'):
        try: r=json.loads(l)
        except: continue
        if 'name' in r: print(f, r['name'], r.get('fwd_gbps'), r.get('fwd_config'), r.get('fwd_ms'))
PY
tar czf $O/zzc2.tar.gz -C $W .
