#!/usr/bin/env bash
# Issue 13, ws dK/dV: dQ staged in the accumulator's permuted layout and added by one bulk
# reduction per tile; LSE/delta by plain loads. Every BwdGpu test (sharded), the A/B, ncu, racecheck.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for i in $(seq 0 15); do
  GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX=$i timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.*' > /tmp/t.$i.log 2>&1 &
done
wait
cat /tmp/t.*.log > $out/tests.txt
echo "tests $(( $(date +%s) - t0 )) s: $(grep -c '^\[       OK' $out/tests.txt) ok, $(grep -c '^\[  FAILED  \]' $out/tests.txt) failed lines"
grep -B2 -A8 "Failure" $out/tests.txt | head -40
train=noop_d128,causal_d128,gqa_causal_d128,long_causal_d128,document_causal_d128,softcap_causal_d128,alibi_causal_d128,sliding_window_d128
d64=noop_d64,causal_d64
for r in 1 2; do
  timeout 100 ./flexjit bench --suite suite.json --only "$train,$d64" --json $out/det_$r.jsonl > $out/det.log 2>&1 || { echo "det bench failed"; tail -3 $out/det.log; }
  timeout 100 ./flexjit bench --suite suite.json --only "$train" --bwd-mode fast --dkdv-config m64n128w8s2ws --json $out/ws2_$r.jsonl > $out/ws.log 2>&1 || { echo "ws bench failed"; tail -5 $out/ws.log; }
  for c in m64n128w8s2ws m64n128w8s3ws m64n128w8s4ws m64n64w4s3ws; do
    timeout 60 ./flexjit bench --suite suite.json --only "$d64" --bwd-mode fast --dkdv-config $c --json $out/$c-d64_$r.jsonl > $out/ws64.log 2>&1 || { echo "ws $c bench failed"; tail -3 $out/ws64.log; }
  done
  echo "bench round $r $(( $(date +%s) - t0 )) s"
done
python3 - $out <<'PY' | tee $out/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
cs = []
for f in sorted(glob.glob(d + "/*_[12].jsonl")):
    c = os.path.basename(f)[:-8].replace("-d64", "")
    if c not in cs: cs.append(c)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][c].append(j.get("bwd_tflops", 0))
print(f"{'problem (bwd TF/s)':24} " + " ".join(f"{c[:13]:>13}" for c in cs))
for n, m in res.items():
    print(f"{n:24} " + " ".join(f"{'/'.join(f'{x:.0f}' for x in m[c]) if c in m else '-':>13}" for c in cs))
PY
timeout 120 ncu --clock-control none --kernel-name regex:bwd_dkdv --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis ./flexjit bench --suite suite.json --only noop_d128 --bwd-mode fast --dkdv-config m64n128w8s2ws > $out/ncu_ws_d128.txt 2>&1
grep -E "Duration|Throughput|Issue Slots|Pipe|Stall|Warp Cycles|Eligible|Active Warps|No Eligible|One or More" $out/ncu_ws_d128.txt | head -30
for tool in racecheck synccheck memcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > /tmp/san.log 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' /tmp/san.log | tr '\n' ' ')" | tee -a $out/sanitizers.txt
  grep -m4 -E "Invalid|Race|Barrier|hazard" /tmp/san.log
done
echo "total $(( $(date +%s) - t0 )) s"
