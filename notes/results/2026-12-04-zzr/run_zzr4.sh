#!/bin/bash
# zzr4: STATS_PAIRS off (main's templates before (zzq), tv_main) against on (this build's own) at
# io head dim 32 (64-column tiles), eight alternating rounds: is the 1-2.5 % of (zzq) above the noise?
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzr4}; r=/tmp/zzr4r/r; mkdir -p $r $out
save() { (cd /tmp/zzr4r && tar czf $out/zzr4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
arm() { v=$1; n=$2; if [ $v = off ]; then td="FLEXJIT_TEMPLATE_DIR=$PWD/tv_main"; else td=; fi
  env $td FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 ./flexjit bench --json $r/${v}_$n.jsonl --suite zzr4.json > $r/${v}_$n.log 2>&1; echo "$v $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
for n in 1 2 3 4 5 6 7 8; do
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
