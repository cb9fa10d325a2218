#!/bin/bash
# zzd8: two Q buffers in the warp-specialised forward (flexjit) against main (flexjit_old, HEAD's
# build), the whole suite forward only, three alternating rounds in one call.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w8; mkdir -p $O $W
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $W/gpu.txt
for r in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fc8_old timeout 100 ./flexjit_old bench --suite suite.json --no-bwd --json $W/old_r$r.jsonl > $W/old_r$r.log 2>&1 || tail -3 $W/old_r$r.log
  FLEXJIT_CACHE_DIR=/tmp/fc8_new timeout 100 ./flexjit bench --suite suite.json --no-bwd --json $W/new_r$r.jsonl > $W/new_r$r.log 2>&1 || tail -3 $W/new_r$r.log
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ('old','new'):
    for r in (1,2,3):
        for l in open(f'{W}/{v}_r{r}.jsonl'):
            try: o=json.loads(l)
            except Exception: continue
            if 'name' in o: rows[o['name']][v].append(o.get('fwd_tflops') or 0)
for n,d in rows.items():
    a=sorted(d['old']); b=sorted(d['new'])
    print(f"{n:28s} old {a}  new {b}  median ratio {b[1]/max(a[1],1e-9):.3f}")
PY
tar czf $O/zzd8.tar.gz -C $W .
