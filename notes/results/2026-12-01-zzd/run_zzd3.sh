#!/bin/bash
# zzd3: main's build: the new forward test of masks changing at 64-key edges; scripts/latency.py
# with --layers 1 and --layers 8 (its first run on a GPU), two rounds each.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjc3 PYTHONPATH=$g/../../python FLEXJIT_LIBRARY=$g/libflexjit.so
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w3; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
timeout 150 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedMasksChangingAt64KeyEdges' > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=|Failure' $W/tests.txt | head; echo "tests $(( $(date +%s) - t0 )) s"
for r in 1 2; do
  for n in 1 8; do
    timeout 150 python3 ../../scripts/latency.py --layers $n > $W/lat_l${n}_r$r.jsonl 2> $W/lat_l${n}_r$r.err || tail -5 $W/lat_l${n}_r$r.err
    echo "layers $n round $r $(( $(date +%s) - t0 )) s"
  done
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for n in (1,8):
    for r in (1,2):
        try: lines=open(f'{W}/lat_l{n}_r{r}.jsonl').read().splitlines()
        except Exception: continue
        for l in lines:
            try: o=json.loads(l)
            except Exception: continue
            if 'system' in o: rows[(o['name'],o['system'])][n].append(o.get('graph_us'))
for k,v in rows.items(): print(f"{k[0]:34s} {k[1]:26s} layers1 {v[1]}  layers8 {v[8]}")
PY
tar czf $O/zzd3.tar.gz -C $W .
