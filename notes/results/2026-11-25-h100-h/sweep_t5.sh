#!/usr/bin/env bash
# Paged decode tiles on this GPU: TMA configs with deeper rings against the default.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t5s}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name --format=csv,noheader | tee $out/gpu.txt
pg=decode_b16_kv32k_paged64,decode_ragged_b32_paged64,decode_b16_kv32k
for r in 1 2; do
  for c in default m16n128w4s3t m16n64w4s6t m16n64w4s5t m16n64w4s3t m16n128w8s3t m16n32w2s8t m16n64w2s6t; do
    extra=""; [ $c != default ] && extra="--decode-config $c"
    timeout 60 ./flexjit bench --suite suite.json --only "$pg" $extra --json $out/s_${c}_$r.jsonl > /dev/null 2>$out/err.txt || { echo "bench $c failed"; tail -2 $out/err.txt; }
  done
done
python3 - $out <<'PY' | tee $out/sweep.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/s_*.jsonl")):
    c, r = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][c].append(j.get("fwd_gbps", 0))
for n, m in res.items():
    print(n + "  " + "  ".join(f"{c}: " + "/".join(f"{g:.0f}" for g in v) for c, v in m.items()))
PY
rm -f $out/s_*.jsonl
