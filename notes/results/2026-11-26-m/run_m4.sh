#!/usr/bin/env bash
# Session (m) m4: the forward's wait for P(t-1) V(t-1) anchored below the softmax (ptxas had hoisted
# it above, serialising the intra-warpgroup overlap). Same binary (HEAD), templates through
# FLEXJIT_TEMPLATE_DIR: t_base = HEAD's, t_anchor = the anchored wait. Two interleaved rounds,
# forward only; then the forward GPU tests and sanitizers on t_anchor.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
fwd=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,long_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,long_document_causal_d128,document_nested_causal_d128
for k in 1 2; do
  for v in base anchor; do
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 90 ./flexjit bench --suite suite.json --only "$fwd" --no-bwd --json $r/b_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v failed"; tail -3 $r/err_$v.txt; }
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 30 ./flexjit bench --suite suite.json --only noop_d64 --config m128n128w8s2ws --no-bwd --json $r/c_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v ws64 failed"; tail -3 $r/err_$v.txt; }
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
        if "name" in j: res[j["name"] + ("" if kind == "b" else " ws")][v].append(j.get("fwd_tflops", 0))
for n, m in res.items():
    o, w = sum(m["base"]) / max(len(m["base"]), 1), sum(m["anchor"]) / max(len(m["anchor"]), 1)
    print(f"{n:30} base " + "/".join(f"{x:.0f}" for x in m["base"]) + "  anchor " + "/".join(f"{x:.0f}" for x in m["anchor"]) + f"  x{w / max(o, 1):.3f}")
PY
export FLEXJIT_TEMPLATE_DIR=$PWD/t_anchor
timeout 220 ./gpu_test_attention --gtest_filter='FwdGpu.*:NegativeScaleGpu.*:Configs/NanGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -A6 Failure $r/t.txt | head -30
for tool in memcheck synccheck; do timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E "ERROR SUMMARY" $r/san_$tool.log | tr '\n' ' ')"; done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
