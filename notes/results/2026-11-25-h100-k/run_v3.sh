#!/usr/bin/env bash
# Session (k) v3, issue 14: the decode kernel reads each tile's list entry a tile ahead (upcoming[]),
# so a list the CTA wrote itself (tile bounds) costs no L2 round trip per tile. A/B of the two
# classifications again (same binary, two interleaved rounds) beside FlexAttention; DecodeGpu tests
# and sanitizers; then the attention suites v1 did not reach, and v1's failing slope draw.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/v3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 200 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $r/decode_tests.txt 2>&1; echo "decode tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/decode_tests.txt | tr '\n' ' ')"
grep -E "FAILED \]" $r/decode_tests.txt | head; grep -A6 Failure $r/decode_tests.txt | head -30
dec=decode_b16_kv32k,decode_b16_kv32k_paged64,decode_ragged_b32_paged64,decode_gqa7_b8_kv64k,decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k
for k in 1 2; do
  timeout 60 ./flexjit bench --suite suite.json --only "$dec" --json $r/b_bounds_$k.jsonl > /dev/null 2>$r/err.txt || { echo "bounds bench failed"; tail -3 $r/err.txt; }
  FLEXJIT_DECODE_CLASSIFY=kernel timeout 60 ./flexjit bench --suite suite.json --only "$dec" --json $r/b_kernel_$k.jsonl > /dev/null 2>$r/err.txt || { echo "kernel bench failed"; tail -3 $r/err.txt; }
done
echo "bench $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 100 python3 peers.py --suite suite.json --only "decode_b16_kv32k,decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
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
    if "name" in j: print("peer", j.get("name"), j.get("system"), j.get("fwd_ms"), j.get("fwd_gbps"))
PY
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='DecodeGpu.WindowOnRaggedLengthsWithWhollyMaskedSequences:DecodeGpu.MaskClassificationWithManyLists' > /tmp/san.log 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' /tmp/san.log | tr '\n' ' ')" | tee -a $r/sanitizers.txt
done
echo "sanitizers $(( $(date +%s) - t0 )) s"
FLEXJIT_TEST_SEED=15840092934110617244 timeout 40 ./gpu_test_attention --gtest_filter='BufferGradGpu.AlibiSlopesPerHead' > $r/alibi_seed.txt 2>&1; echo "alibi seed rc=$? $(grep -E '^\[  (PASSED|FAILED)' $r/alibi_seed.txt | tr '\n' ' ')"
grep -A4 Failure $r/alibi_seed.txt | head
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left ./gpu_test_attention --gtest_filter='-BufferGradGpu.*:BwdGpu.*:DecodeGpu.*' > $r/rest.txt 2>&1; echo "rest rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/rest.txt | tr '\n' ' ')"
grep -E "FAILED \]" $r/rest.txt | head; grep -A6 Failure $r/rest.txt | head -40; grep -E "^\[ RUN" $r/rest.txt | tail -1
grep -E "OK \]" $r/rest.txt | wc -l
echo "total $(( $(date +%s) - t0 )) s"
