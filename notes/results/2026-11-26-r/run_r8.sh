#!/usr/bin/env bash
# Session (r) r8: the unmasked forward's tile shapes on the landing build, after (q)'s epilogue
# and sections: the default against three consumer warpgroups with 64-key tiles (m192n64w12,
# 2-4 stages; shorter chains per warpgroup, r7) and the wide shapes of (f); two rounds,
# `flexjit bench --config`, forward only.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/r8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
C="default m192n64w12s2ws m192n64w12s3ws m192n64w12s4ws m192n128w12s2ws m128n176w8s2ws"
for round in 1 2; do
  for c in $C; do
    arg=""; [ $c = default ] || arg="--config $c"
    timeout 60 ./flexjit bench --suite suite.json --only noop_d128 --no-bwd $arg --json $r/${c}_$round.a > $r/${c}_$round.log 2>&1 || tail -2 $r/${c}_$round.log
    timeout 60 ./flexjit bench --suite suite64x.json --only noop_d64 --no-bwd $arg --json $r/${c}_$round.b >> $r/${c}_$round.log 2>&1 || tail -2 $r/${c}_$round.log
    timeout 60 ./flexjit bench --suite sweep.json --only noop_d128_b16_s2048,noop_d128_b1_s16384 --no-bwd $arg --json $r/${c}_$round.c >> $r/${c}_$round.log 2>&1 || tail -2 $r/${c}_$round.log
    cat $r/${c}_$round.a $r/${c}_$round.b $r/${c}_$round.c > $r/${c}_$round.jsonl 2>/dev/null
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
names = []
for c in C:
    for x in runs[c]:
        for n in x:
            if n not in names: names.append(n)
print(f"{'config':18} " + " ".join(f"{n:>22}" for n in names))
for c in C:
    cells = []
    for n in names:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[c]]
        cells.append(f"{a[0]:10.0f}/{a[1]:<11.0f}")
    print(f"{c:18} " + " ".join(cells) + "  " + (runs[c][0].get(names[0], {}).get("fwd_config", "") if names else ""))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
