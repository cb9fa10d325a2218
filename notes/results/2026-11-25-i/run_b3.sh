#!/usr/bin/env bash
# Issue 13, ws dK/dV: LSE (base 2) and delta by bulk copies from the preprocess kernel's padded row
# statistics; two dQ staging buffers. Every BwdGpu test (sharded), memcheck of a failing ws test,
# the A/B (deterministic vs ws), ncu, sanitizers. Everything lands in $OUT/r.tar.gz.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/b3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for i in $(seq 0 15); do
  GTEST_TOTAL_SHARDS=16 GTEST_SHARD_INDEX=$i timeout 300 ./gpu_test_attention --gtest_filter='BwdGpu.*' > /tmp/t.$i.log 2>&1 &
done
wait
cat /tmp/t.*.log > $r/tests.txt
echo "tests $(( $(date +%s) - t0 )) s: $(grep -c '^\[       OK' $r/tests.txt) ok, $(grep -c '^\[  FAILED  \]' $r/tests.txt) failed lines"
grep -B3 -A6 "Failure" $r/tests.txt | head -40
if grep -q "FAILED  \] BwdGpu.WarpSpecializedFastDkdv" $r/tests.txt; then
  timeout 200 compute-sanitizer --tool memcheck --print-limit 5 ./gpu_test_attention --gtest_filter=BwdGpu.WarpSpecializedFastDkdv > $r/memcheck_ws.txt 2>&1
  grep -m12 -E "Invalid|at 0x|by thread|Address|threw|Failure" $r/memcheck_ws.txt
fi
train=noop_d128,causal_d128,gqa_causal_d128,long_causal_d128,document_causal_d128,softcap_causal_d128,alibi_causal_d128,sliding_window_d128
d64=noop_d64,causal_d64
for k in 1 2; do
  timeout 100 ./flexjit bench --suite suite.json --only "$train,$d64" --json $r/det_$k.jsonl > $r/det.log 2>&1 || { echo "det bench failed"; tail -3 $r/det.log; }
  timeout 100 ./flexjit bench --suite suite.json --only "$train,$d64" --bwd-mode fast --dkdv-config m64n128w8s2ws --json $r/ws2_$k.jsonl > $r/ws.log 2>&1 || { echo "ws bench failed"; tail -5 $r/ws.log; }
  timeout 60 ./flexjit bench --suite suite.json --only "$d64" --bwd-mode fast --dkdv-config m64n128w8s3ws --json $r/ws3_$k.jsonl > $r/ws3.log 2>&1 || { echo "ws3 bench failed"; tail -3 $r/ws3.log; }
  echo "bench round $k $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
cs = []
for f in sorted(glob.glob(d + "/*_[12].jsonl")):
    c = os.path.basename(f)[:-8]
    if c not in cs: cs.append(c)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"]][c].append(j.get("bwd_tflops", 0))
print(f"{'problem (bwd TF/s)':24} " + " ".join(f"{c[:13]:>13}" for c in cs))
for n, m in res.items():
    print(f"{n:24} " + " ".join(f"{'/'.join(f'{x:.0f}' for x in m[c]) if c in m else '-':>13}" for c in cs))
PY
timeout 150 ncu --clock-control none --kernel-name regex:bwd_dkdv --launch-skip 3 --launch-count 1 --set full ./flexjit bench --suite suite.json --only noop_d128 --bwd-mode fast --dkdv-config m64n128w8s2ws > $r/ncu_ws_d128.txt 2>&1
grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Tensor|Stall" $r/ncu_ws_d128.txt | head -20
for tool in racecheck synccheck memcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')" | tee -a $r/sanitizers.txt
  grep -m4 -E "Invalid|Race|Barrier|hazard" $r/san_$tool.txt
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
