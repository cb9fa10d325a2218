#!/bin/bash
# zzd4: decode split counts with the L2 cold between steps (latency.py --layers 8): forced 1, 2,
# 4 splits (FLEXJIT_DECODE_SPLITS) against the rule, two rounds.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjc3 PYTHONPATH=$g/../../python FLEXJIT_LIBRARY=$g/libflexjit.so
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w4; mkdir -p $O $W
t0=$(date +%s)
for r in 1 2; do
  for s in rule 1 2 4; do
    if [ $s = rule ]; then unset FLEXJIT_DECODE_SPLITS; else export FLEXJIT_DECODE_SPLITS=$s; fi
    timeout 100 python3 ../../scripts/latency.py --layers 8 > $W/s${s}_r$r.jsonl 2> $W/s${s}_r$r.err || tail -3 $W/s${s}_r$r.err
  done
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for s in ('rule','1','2','4'):
    for r in (1,2):
        for l in open(f'{W}/s{s}_r{r}.jsonl'):
            try: o=json.loads(l)
            except Exception: continue
            if o.get('system')=='flexjit': rows[o['name']][s].append(o.get('graph_us'))
for n,v in rows.items(): print(f"{n:30s} " + "  ".join(f"{s}: {v[s]}" for s in ('rule','1','2','4')))
PY
tar czf $O/zzd4.tar.gz -C $W .
