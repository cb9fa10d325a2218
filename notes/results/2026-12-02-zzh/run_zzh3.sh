#!/bin/bash
# zzh3: the short sequences' backward: fast mode against the deterministic ways (ordered dQ sums,
# the dQ kernel), two rounds; then ncu's duration of every kernel of the S=257 backward.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzh3}; r=/tmp/zzh3r/r; mkdir -p $r $out
save() { (cd /tmp/zzh3r && tar czf $out/zzh3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc3
t0=$(date +%s)
for round in 1 2; do
  timeout 100 ./flexjit bench --suite short.json --json $r/fast_$round.jsonl > $r/fast_$round.log 2>&1 || tail -3 $r/fast_$round.log
  FLEXJIT_DETERMINISTIC_DQ=ordered timeout 100 ./flexjit bench --suite short.json --bwd-mode deterministic --json $r/ord_$round.jsonl > $r/ord_$round.log 2>&1 || tail -3 $r/ord_$round.log
  FLEXJIT_DETERMINISTIC_DQ=kernel timeout 100 ./flexjit bench --suite short.json --bwd-mode deterministic --json $r/ker_$round.jsonl > $r/ker_$round.log 2>&1 || tail -3 $r/ker_$round.log
  echo "round $round $(( $(date +%s) - t0 )) s"; save
done
python3 - $r <<'PY'
import json, sys, glob
r = sys.argv[1]
def load(arm):
    d = {}
    for f in sorted(glob.glob(f"{r}/{arm}_*.jsonl")):
        for line in open(f):
            if '"name"' in line:
                o = json.loads(line); d.setdefault(o["name"], []).append((o["bwd_tflops"], o.get("bwd_ms"), o.get("bwd_configs"), o.get("bwd_mode")))
    return d
A = {a: load(a) for a in ("fast", "ord", "ker")}
for n in A["fast"]:
    print(f"{n:22s} " + " | ".join(f"{a} {max(x[0] for x in A[a][n]):6.1f} ({A[a][n][0][3]})" for a in A if n in A[a]))
PY
for n in causal_s257_b32 causal_s129_b64; do
timeout 150 ncu --metrics gpu__time_duration.sum --launch-skip 60 --launch-count 24 ./flexjit bench --suite short.json --only $n > $r/ncu_$n.txt 2>&1
grep -E '^  [a-z_]+.*\(|gpu__time_duration' $r/ncu_$n.txt | paste - - | awk '{print $1, $(NF)}' | head -24
done
echo "$(( $(date +%s) - t0 )) s"; save
