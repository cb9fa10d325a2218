#!/usr/bin/env bash
# Session (m) m15: the warp-specialised forward's intra-warpgroup overlap (S(t) and P(t-1) V(t-1)
# in one issue window) turned on for 256-wide V with 64-key tiles (176 accumulator registers; it
# was off above 160). Same binary, templates through FLEXJIT_TEMPLATE_DIR: t_base = committed,
# t_ovl = the change. Three interleaved rounds, forward only; then the forward tests that run
# head dims above 128 on the warp-specialised path, and memcheck / synccheck, on t_ovl.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m15}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for k in 1 2 3; do
  for v in base ovl; do
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 60 ./flexjit bench --suite suite.json --only causal_d256,causal_d128 --no-bwd --json $r/b_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v failed"; tail -3 $r/err_$v.txt; }
  done
  echo "round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/b_*.jsonl")):
    v, k = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][v].append(j.get("fwd_tflops", 0))
for n in sorted(res):
    m = res[n]
    o, w = sum(m["base"]) / max(len(m["base"]), 1), sum(m["ovl"]) / max(len(m["ovl"]), 1)
    print(f"{n:20} base " + "/".join(f"{x:.0f}" for x in m["base"]) + "  ovl " + "/".join(f"{x:.0f}" for x in m["ovl"]) + f"  x{w / max(o, 1):.3f}")
PY
export FLEXJIT_TEMPLATE_DIR=$PWD/t_ovl
timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedShapesBf16:FwdGpu.WarpSpecializedShapesF16:FwdGpu.WarpSpecializedOnePerHeadDim:FwdGpu.HalfPrecisionAndHeadDims:FwdGpu.HopperWgmmaPath' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -A6 Failure $r/t.txt | head -20
for tool in memcheck synccheck; do timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E "ERROR SUMMARY" $r/san_$tool.log | tr '\n' ' ')"; done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
