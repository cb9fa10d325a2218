#!/usr/bin/env bash
# Session (k) v2, issue 14: decode tiles classified by the mask's interval bounds inside the
# decode kernel (default) against the classification kernel (FLEXJIT_DECODE_CLASSIFY=kernel), same
# binary, two interleaved rounds, beside FlexAttention; the tile-bounds and decode GPU tests;
# sanitizers on the bounds path.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/v2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 60 ./gpu_test_expr > $r/expr.txt 2>&1; echo "expr rc=$? $(grep -E '^\[  (PASSED|FAILED)' $r/expr.txt | tr '\n' ' ')"
grep -A8 Failure $r/expr.txt | head -30
timeout 240 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $r/decode_tests.txt 2>&1; echo "decode tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/decode_tests.txt | tr '\n' ' ')"
grep -E "FAILED \]" $r/decode_tests.txt | head; grep -A6 Failure $r/decode_tests.txt | head -30
dec=decode_b16_kv32k,decode_b16_kv32k_paged64,decode_ragged_b32_paged64,decode_gqa7_b8_kv64k,decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k
for k in 1 2; do
  timeout 60 ./flexjit bench --suite suite.json --only "$dec" --json $r/b_bounds_$k.jsonl > /dev/null 2>$r/err.txt || { echo "bounds bench failed"; tail -3 $r/err.txt; }
  FLEXJIT_DECODE_CLASSIFY=kernel timeout 60 ./flexjit bench --suite suite.json --only "$dec" --json $r/b_kernel_$k.jsonl > /dev/null 2>$r/err.txt || { echo "kernel bench failed"; tail -3 $r/err.txt; }
done
echo "bench $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 peers.py --suite suite.json --only "decode_b16_kv32k,decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $r/b_bounds_1.jsonl $r/peers.jsonl > $r/compare_bounds.txt 2>&1
python3 compare.py $r/b_kernel_1.jsonl $r/peers.jsonl > $r/compare_kernel.txt 2>&1
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/b_*.jsonl")):
    c, k = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j:
            res[j["name"]][c].append((j.get("fwd_ms", 0), j.get("fwd_gbps", 0)))
for n, m in res.items():
    print(n)
    for c in sorted(m):
        print(f"   {c:10} " + " / ".join(f"{ms:.4f} ms {g:.0f} GB/s" for ms, g in m[c]))
for j in map(json.loads, open(d + "/peers.jsonl")):
    if "name" in j: print("peer", j.get("name"), j.get("impl", j.get("peer")), j.get("fwd_ms"), j.get("fwd_gbps"))
PY
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='DecodeGpu.WindowOnRaggedLengthsWithWhollyMaskedSequences:DecodeGpu.MaskClassificationWithManyLists' > /tmp/san.log 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' /tmp/san.log | tr '\n' ' ')" | tee -a $r/sanitizers.txt
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
