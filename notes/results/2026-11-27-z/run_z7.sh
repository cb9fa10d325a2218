#!/usr/bin/env bash
# Session (z) z7: causal d128's forward again (z6 read 0.932 in one pair of rounds, z4 1.002, z5's
# ncu 0.988): six interleaved rounds of the benchmark, base (main 3667b6c) and new (HEAD 3d41dd1).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for round in 1 2 3 4 5 6; do
  vs="base new"; [ $((round % 2)) = 0 ] && vs="new base"
  for v in $vs; do
    bin=./flexjit; [ $v = base ] && bin=./flexjit_base
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 60 $bin bench --suite suite.json --only causal_d128,noop_d128,prefix_lm_d128 --no-bwd --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, statistics
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j["fwd_tflops"]
    return out
for n in ["causal_d128", "noop_d128", "prefix_lm_d128"]:
    a = [load(f"{d}/base_{i}.jsonl").get(n, 0) for i in range(1, 7)]
    b = [load(f"{d}/new_{i}.jsonl").get(n, 0) for i in range(1, 7)]
    print(f"{n:18} base {'/'.join(f'{x:.0f}' for x in a)}  new {'/'.join(f'{x:.0f}' for x in b)}  median ratio {statistics.median(b) / statistics.median(a):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf z7.tar.gz r && rm -rf r
