#!/bin/bash
# zzf1: timing probe (wrong results): decode's paged TMA boxes as one 5-D box over all 64-column
# slabs (FLEXJIT_PROBE_ILV=1) against the per-slab boxes, same library and kernel, alternating,
# two rounds, the L2 cold.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjc1 PYTHONPATH=$g/../../python:$g/../../scripts:$g FLEXJIT_LIBRARY=$g/libflexjit.so
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w1; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2; do
  for v in old ilv; do
    if [ $v = ilv ]; then export FLEXJIT_PROBE_ILV=1; else unset FLEXJIT_PROBE_ILV; fi
    timeout 140 python3 ilv_steps.py > $W/${v}_r$r.jsonl 2> $W/${v}_r$r.err || tail -3 $W/${v}_r$r.err
    echo "$v round $r $(( $(date +%s) - t0 )) s"
  done
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ('old','ilv'):
    for r in (1,2):
        try: lines=open(f'{W}/{v}_r{r}.jsonl').read().splitlines()
        except Exception: continue
        for l in lines:
            o=json.loads(l); rows[(o['B'],o['S'],o['page_size'])][v].append(o['flexjit_us'])
for k,d in sorted(rows.items()):
    a=min(d['old'] or [0]); b=min(d['ilv'] or [1e9])
    print(f"B={k[0]:2d} S={k[1]:5d} page={k[2]:3d} old {d['old']} ilv {d['ilv']} old/ilv {a/b:.3f}{' <-' if abs(a/b-1) > 0.03 else ''}")
PY
tar czf $O/zzf1.tar.gz -C $W .
