#!/bin/bash
# zzh6: the producer loads only the next work tile's first K before publishing it (zzh5 loaded its first two K/V tiles, which held the publication back); A/B as zzh5.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzh6}; r=/tmp/zzh6r/r; mkdir -p $r $out
save() { (cd /tmp/zzh6r && tar czf $out/zzh6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for round in 1 2; do
  for arm in old new; do
    T=""; [ $arm = old ] && T=$PWD/tpl_old
    for s in short odd suite5; do
      FLEXJIT_TEMPLATE_DIR=$T FLEXJIT_CACHE_DIR=/tmp/fc_$arm timeout 200 ./flexjit bench --suite $s.json --no-bwd --json $r/${arm}_${s}_$round.jsonl > $r/${arm}_${s}_$round.log 2>&1 || tail -3 $r/${arm}_${s}_$round.log
    done
    echo "$arm $round $(( $(date +%s) - t0 )) s"
  done
  save
done
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob, statistics
r = sys.argv[1]
def load(arm):
    d = {}
    for f in sorted(glob.glob(f"{r}/{arm}_*_*.jsonl")):
        for line in open(f):
            if '"name"' in line:
                o = json.loads(line); d.setdefault(o["name"], []).append(o["fwd_tflops"])
    return d
o, n = load("old"), load("new")
short = []
for k in o:
    a, b = max(o[k]), max(n.get(k, [0]))
    if k.startswith(("causal_s", "noop_s", "gqa7")): short.append(b / a)
    print(f"{k:34s} old {a:6.1f} new {b:6.1f} x{b / a:.3f}  ({' '.join(f'{x:.0f}' for x in o[k])} / {' '.join(f'{x:.0f}' for x in n.get(k, []))})")
print(f"SHORT_GEOMEAN {statistics.geometric_mean(short):.4f}")
PY
cat $r/ab.txt; save
echo "$(( $(date +%s) - t0 )) s"; save
