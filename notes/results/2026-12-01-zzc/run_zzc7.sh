#!/bin/bash
# zzc7: the landing build (+ contiguous caches up to 16384 keys by cp.async): decode GPU tests,
# memcheck, forward/backward smoke on the launch path, Python GPU tests, latency.py main / zzc5 /
# new, the decode suite.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache PYTHONPATH=$g/../../python
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w7; mkdir -p $O $W
t0=$(date +%s)
timeout 220 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $W/decode_tests.txt 2>&1; echo "rc=$?" >> $W/decode_tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=' $W/decode_tests.txt; echo "tests $(( $(date +%s) - t0 )) s"
timeout 100 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter='DecodeGpu.HopperContiguous*' > $W/memcheck.txt 2>&1; echo "rc=$?" >> $W/memcheck.txt
grep -E 'ERROR SUMMARY|PASSED|FAILED|rc=' $W/memcheck.txt; echo "memcheck $(( $(date +%s) - t0 )) s"
timeout 150 ./gpu_test_attention --gtest_filter='FwdGpu.SuiteMods:BwdGpu.CapturedInAGraph*:BwdGpu.FastAndDeterministicModes' > $W/smoke.txt 2>&1; echo "rc=$?" >> $W/smoke.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=' $W/smoke.txt; echo "smoke $(( $(date +%s) - t0 )) s"
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links $g/wheels pytest > /dev/null 2>&1
(cd ../../python && FLEXJIT_LIBRARY=$g/libflexjit.so FLEXJIT_CACHE_DIR=/tmp/fc_py PYTHONPATH=$PWD timeout 120 python3 -m pytest -q -x -rs tests/test_gpu_decode_grad.py tests/test_gpu_lens.py > $W/pytest.txt 2>&1; echo "pytest rc=$?" >> $W/pytest.txt)
tail -3 $W/pytest.txt; echo "pytest $(( $(date +%s) - t0 )) s"
for lib in old zzc5 new; do
  L=$g/libflexjit_$lib.so; [ $lib = new ] && L=$g/libflexjit.so
  FLEXJIT_LIBRARY=$L timeout 60 python3 ../../scripts/latency.py > $W/lat_$lib.jsonl 2> $W/lat_$lib.err
done
echo "latency $(( $(date +%s) - t0 )) s"
./flexjit bench --suite dec.json --json $W/dec.jsonl > /dev/null 2>&1
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(dict)
for lib in ('old','zzc5','new'):
    for l in open(f'{W}/lat_{lib}.jsonl'):
        o=json.loads(l)
        if 'system' in o: rows[(o['name'],o['system'])][lib]=(o.get('graph_us'),o.get('loop_us'))
for k,v in rows.items(): print(f"{k[0]:28s} {k[1]:30s} " + "  ".join(f"{t} {v.get(t)}" for t in ('old','zzc5','new')))
for l in open(f'{W}/dec.jsonl'):
    try: r=json.loads(l)
    except: continue
    if 'name' in r: print('dec', r['name'], r.get('fwd_gbps'), r.get('fwd_config'))
PY
tar czf $O/zzc7.tar.gz -C $W .
