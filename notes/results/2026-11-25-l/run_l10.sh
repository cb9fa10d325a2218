#!/usr/bin/env bash
# Session (l) l10, on an H100 (final code): two chains of turns per query tile (kv tile parity, two fp32 copies of
# dQ summed in order by the convert kernel). The ordered tests on it; then fast / two chains /
# one chain (tmpl_one_chain through FLEXJIT_TEMPLATE_DIR: the same kernel with chains = 1) / dQ
# kernel, two interleaved rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/l10}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 150 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeTakesTheFasterWayPerCall' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -A6 Failure $r/t.txt | head -30
for tool in racecheck synccheck; do timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim' > /tmp/san.log 2>&1; echo "$tool rc=$?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" /tmp/san.log)"; grep -A1 "Error: Race" /tmp/san.log | grep -v "^--" | sed "s/+0x[0-9a-f]*//" | sort | uniq -c > $r/race_$tool.txt; done
train=noop_d128,causal_d128,noop_d64,causal_d64,alibi_causal_d128,prefix_lm_d128,gqa_causal_d128,sliding_window_d128,long_causal_d128,document_causal_d128
for k in 1; do
  timeout 60 ./flexjit bench --suite suite.json --only "$train" --json $r/b_fast_$k.jsonl > /dev/null 2>$r/err.txt || { echo "fast failed"; tail -3 $r/err.txt; }
  FLEXJIT_DETERMINISTIC_DQ=ordered timeout 60 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/b_two_$k.jsonl > /dev/null 2>$r/err.txt || { echo "two failed"; tail -3 $r/err.txt; }
  FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_one_chain FLEXJIT_DETERMINISTIC_DQ=ordered timeout 90 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/b_one_$k.jsonl > /dev/null 2>$r/err.txt || { echo "one failed"; tail -3 $r/err.txt; }
  FLEXJIT_DETERMINISTIC_DQ=kernel timeout 60 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/b_kernel_$k.jsonl > /dev/null 2>$r/err.txt || { echo "kernel failed"; tail -3 $r/err.txt; }
  echo "round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/b_*.jsonl")):
    c, k = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][c].append(j.get("bwd_tflops", 0))
for n, m in res.items():
    print(f"{n:26} " + "  ".join(f"{c} " + "/".join(f"{x:.0f}" for x in m[c]) for c in ["fast", "two", "one", "kernel"] if c in m))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
