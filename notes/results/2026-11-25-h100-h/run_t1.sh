#!/usr/bin/env bash
# TMA decode (issue 14): GPU tests, sanitizers, and an A/B of decode configs in one device session.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p /work; [ -e /work/main ] || ln -s "$root" /work/main
cd "$here"
out=${OUT:-/tmp/t1}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
t0=$(date +%s)
timeout 240 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $out/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (FAILED|PASSED) |OK \]|FAILED \]|SKIPPED" $out/tests.txt | tail -30
dec=decode_b16_kv32k,decode_b16_kv32k_paged64,decode_ragged_b32_paged64,decode_gqa7_b8_kv64k,decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k
for r in 1 2; do
  for c in default m16n128w8s3t m16n64w4s4t m16n128w4s3t; do
    extra=""; [ $c != default ] && extra="--decode-config $c"
    timeout 100 ./flexjit bench --suite suite.json --only "$dec" $extra --json $out/b_${c}_$r.jsonl > /dev/null 2>$out/err_$c.txt || { echo "bench $c failed"; tail -3 $out/err_$c.txt; }
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $out <<'PY' | tee $out/ab.txt
import json, sys, glob, os, collections
out = sys.argv[1]
res = collections.defaultdict(dict)
for f in sorted(glob.glob(out + "/b_*.jsonl")):
    c, r = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j:
            res[j["name"]].setdefault(c, []).append((j.get("fwd_gbps", 0), j.get("fwd_ms", 0)))
cfgs = ["default", "m16n128w8s3t", "m16n64w4s4t", "m16n128w4s3t"]
print(f"{'problem':34}" + "".join(f"{c:>26}" for c in cfgs))
for n, d in res.items():
    print(f"{n:34}" + "".join(f"{' / '.join(f'{g:.0f} {m:.4f}' for g, m in d.get(c, [])):>26}" for c in cfgs))
PY
for tool in memcheck racecheck synccheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='DecodeGpu.TmaPagesOfEverySizeAndContiguous:DecodeGpu.BadPageTableIsNeverReadAndIsReported' > /tmp/san.log 2>&1
  echo "== $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' /tmp/san.log | tr '\n' ' ')" | tee -a $out/sanitizers.txt
done
echo "total $(( $(date +%s) - t0 )) s"
