#!/usr/bin/env bash
# Issue 13, ws dK/dV as the fast mode's default: every BwdGpu test (sharded), sanitizers on the ws
# kernel, then the A/B: deterministic / fast (ws) / fast with the heaviest kv tiles first.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for i in $(seq 0 15); do
  GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX=$i timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.*' > /tmp/t.$i.log 2>&1 &
done
wait
cat /tmp/t.*.log > $r/tests.txt
echo "tests $(( $(date +%s) - t0 )) s: $(grep -c '^\[       OK' $r/tests.txt) ok, $(grep -c '^\[  FAILED  \]' $r/tests.txt) failed lines"
grep -B3 -A6 "Failure" $r/tests.txt | head -30
for f in BwdGpu.FastModeOnePerHeadDim BwdGpu.WarpSpecializedFastDkdv; do
  for tool in memcheck synccheck racecheck; do
    [ $f = BwdGpu.WarpSpecializedFastDkdv ] && [ $tool != memcheck ] && continue
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 1 --print-limit 5 ./gpu_test_attention --gtest_filter=$f > $r/san_${f#BwdGpu.}_$tool.txt 2>&1
    echo "== $f $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_${f#BwdGpu.}_$tool.txt | tr '\n' ' ')" | tee -a $r/sanitizers.txt
    grep -m3 -E "Invalid|Race reported|Barrier|threw" $r/san_${f#BwdGpu.}_$tool.txt
  done
done
echo "sanitizers $(( $(date +%s) - t0 )) s"
train=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,gqa_causal_d128,long_causal_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,softcap_causal_d128,alibi_causal_d128,sliding_window_d128,long_document_causal_d128
for k in 1 2; do
  timeout 120 ./flexjit bench --suite suite.json --only "$train" --json $r/det_$k.jsonl > $r/det.log 2>&1 || { echo "det bench failed"; tail -3 $r/det.log; }
  timeout 120 ./flexjit bench --suite suite.json --only "$train" --bwd-mode fast --json $r/fast_$k.jsonl > $r/fast.log 2>&1 || { echo "fast bench failed"; tail -5 $r/fast.log; }
  timeout 120 ./flexjit_old bench --suite suite.json --only "$train" --bwd-mode fast --json $r/fastold_$k.jsonl > $r/fastold.log 2>&1 || { echo "fastold bench failed"; tail -5 $r/fastold.log; }
  echo "bench round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list)); cfg = {}
cs = []
for f in sorted(glob.glob(d + "/*_[12].jsonl")):
    c = os.path.basename(f)[:-8]
    if c not in cs: cs.append(c)
    for j in map(json.loads, open(f)):
        if "name" in j:
            res[j["name"]][c].append(j.get("bwd_tflops", 0))
            if c == "fast": cfg[j["name"]] = j.get("bwd_configs", "") + " " + j.get("bwd_mode", "")
print(f"{'problem (bwd TF/s)':28} " + " ".join(f"{c[:13]:>13}" for c in cs) + "  fast configs")
for n, m in res.items():
    print(f"{n:28} " + " ".join(f"{'/'.join(f'{x:.0f}' for x in m[c]) if c in m else '-':>13}" for c in cs) + "  " + cfg.get(n, ""))
PY
timeout 120 ncu --clock-control none --kernel-name regex:bwd_dkdv --launch-skip 3 --launch-count 1 --section WarpStateStats --section SpeedOfLight --section SourceCounters ./flexjit bench --suite suite.json --only noop_d128 --bwd-mode fast > $r/ncu_ws_d128.txt 2>&1
grep -E "Duration|Compute \(SM\) Throughput|Warp Cycles Per Issued|barrier|Stall" $r/ncu_ws_d128.txt | head -12
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
