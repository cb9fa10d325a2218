#!/usr/bin/env bash
# Session (m) m5: the warp-specialised backward with the kv rows split (d64): tile t + 1's S^T and
# dP^T issued ahead of tile t's dQ staging. Same binary (HEAD), templates through
# FLEXJIT_TEMPLATE_DIR: t_base = HEAD's, t_ahead = the change. Two interleaved rounds; then the
# backward GPU tests and sanitizers on t_ahead.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
fast=noop_d64,causal_d64,relpos_learnable_causal_d64,noop_d128
for k in 1 2; do
  for v in base ahead; do
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 90 ./flexjit bench --suite suite.json --only "$fast" --json $r/b_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v failed"; tail -3 $r/err_$v.txt; }
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v FLEXJIT_DETERMINISTIC_DQ=ordered timeout 60 ./flexjit bench --suite suite.json --only noop_d64,causal_d64 --bwd-mode deterministic --json $r/c_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v ordered failed"; tail -3 $r/err_$v.txt; }
  done
  echo "round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/[bc]_*.jsonl")):
    kind = os.path.basename(f)[0]
    v, k = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"] + (" fast" if kind == "b" else " ordered")][v].append(j.get("bwd_tflops", 0))
for n, m in res.items():
    o, w = sum(m["base"]) / max(len(m["base"]), 1), sum(m["ahead"]) / max(len(m["ahead"]), 1)
    print(f"{n:36} base " + "/".join(f"{x:.0f}" for x in m["base"]) + "  ahead " + "/".join(f"{x:.0f}" for x in m["ahead"]) + f"  x{w / max(o, 1):.3f}")
PY
export FLEXJIT_TEMPLATE_DIR=$PWD/t_ahead
timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -A6 Failure $r/t.txt | head -30
for tool in memcheck synccheck; do timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E "ERROR SUMMARY" $r/san_$tool.log | tr '\n' ' ')"; done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
