#!/usr/bin/env bash
# Session (q) q7: forward block configs of the unmasked problems again, now that the
# warp-specialised kernel stores O through TMA: d64 (default: the synchronous m128n128w8s2g) and
# d128 (default m128n128w8s2ws), two rounds, forward only.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
C="default m128n128w8s2g m128n128w8s2ws m128n128w8s3ws m192n128w12s2ws m128n176w8s2ws"
for round in 1 2; do
  for c in $C; do
    arg=""; [ $c = default ] || arg="--config $c"
    timeout 60 ./flexjit bench --suite suite.json --only noop_d64,noop_d128 --no-bwd $arg --json $r/${c}_$round.jsonl > $r/${c}_$round.log 2>&1 || tail -2 $r/${c}_$round.log
    timeout 60 ./flexjit bench --suite sweep.json --only noop_d128_b16_s2048,noop_d128_b1_s16384 --no-bwd $arg --json $r/${c}_$round.jsonl.b > $r/${c}_$round.logb 2>&1 || tail -2 $r/${c}_$round.logb
    cat $r/${c}_$round.jsonl.b >> $r/${c}_$round.jsonl
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$C" <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; C = sys.argv[2].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {c: [load(f"{d}/{c}_{i}.jsonl") for i in (1, 2)] for c in C}
print(f"{'problem':22} " + " ".join(f"{c:>16}" for c in C))
for n in runs["default"][0]:
    row = []
    for c in C:
        v = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[c]]
        row.append(f"{v[0]:7.0f}/{v[1]:<7.0f}" if v[0] else f"{'-':>16}")
    print(f"{n:22} " + " ".join(row), runs["default"][0][n].get("fwd_config", ""))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
