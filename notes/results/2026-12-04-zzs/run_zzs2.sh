#!/bin/bash
# zzs2: main's binary (statistics pairs at tile head dims up to 64 only) against the build that
# also pairs them at tile head dim 128 with a score_mod, zzs.json, up to eight alternating rounds
# (no round starts past 470 s). causal_d128 is a control: the same kernel in both.
# Usage: run_zzs2.sh [SUITE] (default zzs.json; the next session's 32-bit offsets call passes
# next_offsets.json, see README).
set -u
cd "$(dirname "$0")"
suite=${1:-zzs.json}
out=${OUT:-/tmp/zzs2}; r=/tmp/zzs2r/r; mkdir -p $r $out
save() { (cd /tmp/zzs2r && tar czf $out/zzs2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
arm() { v=$1; n=$2; if [ $v = on ]; then b=./flexjit; else b=./flexjit_main; fi
  FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $b bench --json $r/${v}_$n.jsonl --suite $suite > $r/${v}_$n.log 2>&1; echo "$v $n rc=$? $(( $(date +%s) - t0 )) s"; save; }
for n in 1 2 3 4 5 6 7 8; do
  [ $(( $(date +%s) - t0 )) -gt 470 ] && break
  if [ $((n % 2)) = 1 ]; then arm off $n; arm on $n; else arm on $n; arm off $n; fi
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, statistics as st
t = {}
for f in glob.glob(sys.argv[1] + "/*_[0-9].jsonl"):
    a = f.split("/")[-1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and "bwd_ms" in l:
            o = json.loads(l); t.setdefault((o["name"], a), []).append((int(f.rsplit("_", 1)[1].split(".")[0]), o["bwd_ms"]))
for n in sorted({k[0] for k in t}):
    a = [x for _, x in sorted(t.get((n, "off"), []))]; b = [x for _, x in sorted(t.get((n, "on"), []))]
    if not a or not b: print(n, "missing"); continue
    wins = sum(x > y for x, y in zip(a, b))
    print(f"{n}: off {' '.join(f'{x:.4f}' for x in a)} | on {' '.join(f'{x:.4f}' for x in b)} | off/on {st.median(a)/st.median(b):.3f} (on faster in {wins} of {min(len(a), len(b))} rounds)")
PY
echo "done $(( $(date +%s) - t0 )) s"; save
