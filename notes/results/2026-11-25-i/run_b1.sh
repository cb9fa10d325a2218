#!/usr/bin/env bash
# Issue 13: the warp-specialised dK/dV kernel of the fast backward (ws), first GPU check: its
# tests, then an A/B in one process group: deterministic / fast g / fast ws; sanitizers.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b1}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
t0=$(date +%s)
timeout 240 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOnePerHeadDim' > $out/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (FAILED|PASSED) |FAILED \]|Failure|rror" $out/tests.txt | head -20
grep -B2 -A8 "Failure" $out/tests.txt | head -60
train=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,long_causal_d128,document_causal_d128,softcap_causal_d128,alibi_causal_d128,sliding_window_d128
for r in 1 2; do
  timeout 100 ./flexjit bench --suite suite.json --only "$train" --json $out/det_$r.jsonl > $out/det.log 2>&1 || { echo "det bench failed"; tail -3 $out/det.log; }
  timeout 100 ./flexjit bench --suite suite.json --only "$train" --bwd-mode fast --json $out/fastg_$r.jsonl > $out/fastg.log 2>&1 || { echo "fast g bench failed"; tail -3 $out/fastg.log; }
  timeout 100 ./flexjit bench --suite suite.json --only "$train" --bwd-mode fast --dkdv-config m64n128w8s2ws --json $out/fastws_$r.jsonl > $out/fastws.log 2>&1 || { echo "fast ws bench failed"; tail -5 $out/fastws.log; }
  echo "bench round $r $(( $(date +%s) - t0 )) s"
done
python3 - $out <<'PY' | tee $out/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/*_[12].jsonl")):
    c = os.path.basename(f)[:-8]
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][c].append(j.get("bwd_tflops", 0))
cs = ["det", "fastg", "fastws"]
print(f"{'problem (bwd TF/s)':28} " + " ".join(f"{c:>14}" for c in cs))
for n, m in res.items():
    print(f"{n:28} " + " ".join(f"{'/'.join(f'{x:.0f}' for x in m[c]):>14}" for c in cs))
PY
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > /tmp/san.log 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' /tmp/san.log | tr '\n' ' ')" | tee -a $out/sanitizers.txt
  grep -m5 -E "Invalid|Race|Barrier|hazard" /tmp/san.log
done
echo "total $(( $(date +%s) - t0 )) s"
