#!/bin/bash
# zzf5: B = 1 and 8 steps: main's library, the new one with its rule, and the new one with whole
# slabs forced off (FLEXJIT_DECODE_WHOLE_SLABS=0) and on (=1), alternating, three rounds.
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off PYTHONPATH=$g/../../python:$g/../../scripts:$g
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/w5; mkdir -p $O $W
t0=$(date +%s)
for r in 1 2 3; do
  for v in old new new0 new1; do
    lib=$g/libflexjit.so; [ $v = old ] && lib=$g/libflexjit_old.so
    unset FLEXJIT_DECODE_WHOLE_SLABS
    [ $v = new0 ] && export FLEXJIT_DECODE_WHOLE_SLABS=0
    [ $v = new1 ] && export FLEXJIT_DECODE_WHOLE_SLABS=1
    FLEXJIT_CACHE_DIR=/tmp/fjc_$v FLEXJIT_LIBRARY=$lib timeout 100 python3 b1_steps.py > $W/${v}_r$r.jsonl 2> $W/${v}_r$r.err || tail -3 $W/${v}_r$r.err
  done
  echo "round $r $(( $(date +%s) - t0 )) s"
done
python3 - $W <<'PY'
import json,sys,collections
W=sys.argv[1]; rows=collections.defaultdict(lambda: collections.defaultdict(list))
vs=('old','new','new0','new1')
for v in vs:
    for r in (1,2,3):
        try: lines=open(f'{W}/{v}_r{r}.jsonl').read().splitlines()
        except Exception: continue
        for l in lines:
            o=json.loads(l); rows[(o['B'],o['S'],o['page_size'])][v].append(o['flexjit_us'])
for k,d in sorted(rows.items()):
    m={v:min(d[v] or [0]) for v in vs}
    print(f"B={k[0]:2d} S={k[1]:5d} page={k[2]:3d} " + " ".join(f"{v} {m[v]:.2f}" for v in vs) + f" | old/new0 {m['old']/m['new0']:.3f} old/new1 {m['old']/m['new1']:.3f}")
PY
tar czf $O/zzf5.tar.gz -C $W .
