#!/bin/bash
# zzd9: timing probe: the warp-specialised forward without its O and LSE stores (tpl_probe2,
# wrong results) against main's templates (tpl_old), three alternating rounds, forward only.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w9; mkdir -p $O $W
t0=$(date +%s)
X=sliding_window_d128,long_sliding_window_d128,causal_d128,noop_d128,causal_d64
for r in 1 2 3; do
  for v in old probe2; do
    FLEXJIT_CACHE_DIR=/tmp/fc9_$v FLEXJIT_TEMPLATE_DIR=$g/tpl_$v timeout 100 ./flexjit bench --suite suite.json --only $X --no-bwd --json $W/${v}_r$r.jsonl > $W/${v}_r$r.log 2>&1 || tail -3 $W/${v}_r$r.log
  done
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ('old','probe2'):
    for r in (1,2,3):
        for l in open(f'{W}/{v}_r{r}.jsonl'):
            try: o=json.loads(l)
            except Exception: continue
            if 'name' in o: rows[o['name']][v].append(o.get('fwd_tflops') or 0)
for n,d in rows.items():
    a=sorted(d['old']); b=sorted(d['probe2'])
    print(f"{n:28s} old {a}  probe2 {b}  median ratio {b[1]/max(a[1],1e-9):.3f}")
PY
tar czf $O/zzd9.tar.gz -C $W .
