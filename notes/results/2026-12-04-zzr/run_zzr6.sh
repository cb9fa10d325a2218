#!/bin/bash
# zzr6: the statistics pairs forced on at head dim 128 (tv_on: every {% if stats_pairs %} true)
# against this build's own (off at 128), d128 suite problems, six alternating rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzr6}; r=/tmp/zzr6r/r; mkdir -p $r $out
save() { (cd /tmp/zzr6r && tar czf $out/zzr6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
arm() { v=$1; n=$2; if [ $v = on ]; then td="FLEXJIT_TEMPLATE_DIR=$PWD/tv_on"; else td=; fi
  env $td FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 90 ./flexjit bench --json $r/${v}_$n.jsonl --suite zzr6.json > $r/${v}_$n.log 2>&1; echo "$v $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
for n in 1 2 3 4 5 6; do
  if [ $((n % 2)) = 1 ]; then arm off $n; arm on $n; else arm on $n; arm off $n; fi
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/*_[0-9].jsonl"):
    a = f.split("/")[-1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append(o["bwd_ms"])
for n in sorted({k[0] for k in t}):
    a, b = t.get((n, "off"), [0]), t.get((n, "on"), [0])
    wins = sum(x > y for x, y in zip(a, b))
    print(f"{n}: off {' '.join(f'{x:.4f}' for x in a)} | on {' '.join(f'{x:.4f}' for x in b)} | off/on {st.median(a)/st.median(b):.3f} (on faster in {wins} of {min(len(a), len(b))} rounds)")
PY
echo "done $(( $(date +%s) - t0 )) s"; save
