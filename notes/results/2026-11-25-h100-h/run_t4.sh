#!/usr/bin/env bash
# Decode (issue 14): in-kernel classification of short caches (new) against the classification
# kernel (old binary, 81a1ef0), both with their defaults, beside FlexAttention; GPU tests and
# sanitizers of the new path.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t4}; mkdir -p $out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/r/gpu.txt
t0=$(date +%s)
timeout 200 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $out/r/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (FAILED|PASSED) |FAILED \]|Failure" $out/r/tests.txt | head -20
grep -A6 "Failure" $out/r/tests.txt | head -40
dec=decode_b16_kv32k,decode_b16_kv32k_paged64,decode_ragged_b32_paged64,decode_gqa7_b8_kv64k,decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k
masked=decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k
for r in 1 2; do
  timeout 100 ./flexjit_old bench --suite suite.json --only "$dec" --json $out/r/b_old_$r.jsonl > /dev/null 2>$out/r/err.txt || { echo "old bench failed"; tail -3 $out/r/err.txt; }
  timeout 100 ./flexjit bench --suite suite.json --only "$dec" --json $out/r/b_new_$r.jsonl > /dev/null 2>$out/r/err.txt || { echo "new bench failed"; tail -3 $out/r/err.txt; }
  for c in m16n128w4s3t m16n128w8s3; do
    timeout 60 ./flexjit bench --suite suite.json --only "$masked" --decode-config $c --json $out/r/b_new-${c}_$r.jsonl > /dev/null 2>$out/r/err.txt || { echo "bench $c failed"; tail -3 $out/r/err.txt; }
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 peers.py --suite suite.json --only "$masked,decode_ragged_b32_paged64" > $out/r/peers.jsonl 2> $out/r/peers.err || tail -3 $out/r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $out/r/b_new_1.jsonl $out/r/peers.jsonl > $out/r/compare_new.txt 2>&1
python3 - $out/r <<'PY' | tee $out/r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/b_*.jsonl")):
    c, r = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j:
            res[j["name"]][c].append((j.get("fwd_ms", 0), j.get("fwd_gbps", 0)))
for n, m in res.items():
    print(n)
    for c in sorted(m):
        print(f"   {c:24} " + " / ".join(f"{ms:.4f} ms {g:.0f} GB/s" for ms, g in m[c]))
PY
grep -E "flex |flexjit " $out/r/compare_new.txt | head -12
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='DecodeGpu.InKernelAndKernelClassificationAgreeBitwise:DecodeGpu.MaskClassificationWithManyLists' > /tmp/san.log 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' /tmp/san.log | tr '\n' ' ')" | tee -a $out/r/sanitizers.txt
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf t4.tar.gz r && rm -rf r
