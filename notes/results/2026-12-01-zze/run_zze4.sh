#!/bin/bash
# zze4: decode split counts for paged TMA caches with pages of 32, 64 and 128 keys: main's rule
# against one split (FLEXJIT_DECODE_SPLITS=1), alternating, two rounds, the L2 cold.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjc4 PYTHONPATH=$g/../../python:$g/../../scripts:$g FLEXJIT_LIBRARY=$g/libflexjit.so
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w4; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2; do
  for v in rule one; do
    if [ $v = one ]; then export FLEXJIT_DECODE_SPLITS=1; else unset FLEXJIT_DECODE_SPLITS; fi
    timeout 110 python3 splits_pages.py > $W/${v}_r$r.jsonl 2> $W/${v}_r$r.err || tail -3 $W/${v}_r$r.err
    echo "$v round $r $(( $(date +%s) - t0 )) s"
  done
done
unset FLEXJIT_DECODE_SPLITS
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ('rule','one'):
    for r in (1,2):
        try: lines=open(f'{W}/{v}_r{r}.jsonl').read().splitlines()
        except Exception: continue
        for l in lines:
            o=json.loads(l); rows[(o['B'],o['S'],o['page_size'])][v].append(o['flexjit_us'])
for k,d in sorted(rows.items()):
    a=min(d['rule'] or [0]); b=min(d['one'] or [1e9])
    print(f"B={k[0]:2d} S={k[1]:5d} page={k[2]:3d} rule {d['rule']} one {d['one']} rule/one {a/b:.3f}{' <-' if a/b > 1.03 else ''}")
PY
tar czf $O/zze4.tar.gz -C $W .
