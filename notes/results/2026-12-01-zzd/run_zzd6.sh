#!/bin/bash
# zzd6: timing probe: the warp-specialised forward with no mask pass on partial tiles (tpl_probe,
# wrong results) against main's templates (tpl_old), three alternating rounds, forward only.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w6; mkdir -p $O $W
t0=$(date +%s)
X=sliding_window_d128,long_sliding_window_d128,causal_d128,causal_d64,prefix_lm_d128,document_causal_d128
for r in 1 2 3; do
  for v in old probe; do
    FLEXJIT_CACHE_DIR=/tmp/fc6_$v FLEXJIT_TEMPLATE_DIR=$g/tpl_$v timeout 100 ./flexjit bench --suite suite.json --only $X --no-bwd --json $W/${v}_r$r.jsonl > $W/${v}_r$r.log 2>&1 || tail -3 $W/${v}_r$r.log
  done
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
for v in ('old','probe'):
    for r in (1,2,3):
        for l in open(f'{W}/{v}_r{r}.jsonl'):
            try: o=json.loads(l)
            except Exception: continue
            if 'name' in o: rows[o['name']][v].append(o.get('fwd_tflops') or 0)
for n,d in rows.items():
    a=sorted(d['old']); b=sorted(d['probe'])
    print(f"{n:28s} old {a}  probe {b}  median ratio {b[1]/max(a[1],1e-9):.3f}")
PY
tar czf $O/zzd6.tar.gz -C $W .
