#!/bin/bash
# zzc1: small decode steps on main (c633a7d): latency.py twice, a split sweep, and ncu's kernel times.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache FLEXJIT_LIBRARY=$g/libflexjit.so PYTHONPATH=$g/../../python
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w1; mkdir -p $O $W
t0=$(date +%s)
for r in 1 2; do timeout 150 python3 ../../scripts/latency.py > $W/lat_r$r.jsonl 2> $W/lat_r$r.err; done
echo "latency $(( $(date +%s) - t0 )) s"
for s in 1 2 4 8 12 16 24 32 48; do FLEXJIT_DECODE_SPLITS=$s timeout 60 python3 sweep.py >> $W/sweep.jsonl 2>> $W/sweep.err; done
timeout 60 python3 sweep.py >> $W/sweep.jsonl 2>> $W/sweep.err
echo "sweep $(( $(date +%s) - t0 )) s"
timeout 200 ncu --metrics gpu__time_duration.sum --csv python3 prof.py > $W/ncu.csv 2> $W/ncu.err
echo "ncu $(( $(date +%s) - t0 )) s"
python3 - $W <<'PY'
import json,sys,collections,csv
W=sys.argv[1]
for f in ['lat_r1','lat_r2']:
    for l in open(f'{W}/{f}.jsonl'):
        r=json.loads(l)
        if 'system' in r: print(f, r['name'], r['system'], r.get('loop_us'), r.get('graph_us'), r.get('graph_error','')[:80])
for l in open(f'{W}/sweep.jsonl'):
    r=json.loads(l); print('sweep', r['name'], r['splits'], r.get('loop_us'), r.get('graph_us'))
rows=[l for l in open(f'{W}/ncu.csv') if l.startswith('"')]
for r in csv.DictReader(rows):
    print('ncu', r.get('ID'), r.get('Kernel Name','')[:70], r.get('Grid Size'), r.get('Block Size'), r.get('Metric Value'))
PY
tar czf $O/zzc1.tar.gz -C $W .
