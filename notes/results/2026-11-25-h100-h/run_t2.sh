#!/usr/bin/env bash
# Decode (issue 14): the TMA paged default and programmatic dependent launch behind the mask
# classification (FLEXJIT_DECODE_PDL=1), A/B in one device session beside the peers.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
out=${OUT:-/tmp/t2}; mkdir -p $out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/r/gpu.txt
t0=$(date +%s)
timeout 200 ./gpu_test_attention --gtest_filter='DecodeGpu.*' > $out/r/tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (FAILED|PASSED) |FAILED \]|SKIPPED|Failure|error" $out/r/tests.txt | head -20
FLEXJIT_DECODE_PDL=1 timeout 150 ./gpu_test_attention --gtest_filter='DecodeGpu.Mask*:DecodeGpu.Window*:DecodeGpu.Mods*:DecodeGpu.TmaRatios*:DecodeGpu.RatioSeven*:DecodeGpu.EveryRatio*' > $out/r/tests_pdl.txt 2>&1; echo "pdl tests rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[  (FAILED|PASSED) |FAILED \]|Failure" $out/r/tests_pdl.txt | head -10
dec=decode_b16_kv32k,decode_b16_kv32k_paged64,decode_ragged_b32_paged64,decode_gqa7_b8_kv64k,decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k
masked=decode_spec4_b16_kv32k,decode_sliding_alibi_b16_kv32k
for r in 1 2; do
  for pdl in 0 1; do
    FLEXJIT_DECODE_PDL=$pdl timeout 100 ./flexjit bench --suite suite.json --only "$dec" --json $out/r/b_default-pdl${pdl}_$r.jsonl > /dev/null 2>$out/r/err.txt || { echo "bench failed"; tail -3 $out/r/err.txt; }
    for c in m16n128w8s3 m16n128w4s3t; do
      FLEXJIT_DECODE_PDL=$pdl timeout 60 ./flexjit bench --suite suite.json --only "$masked" --decode-config $c --json $out/r/b_$c-pdl${pdl}_$r.jsonl > /dev/null 2>$out/r/err.txt || { echo "bench $c failed"; tail -3 $out/r/err.txt; }
    done
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 200 python3 peers.py --suite suite.json --only "$dec" > $out/r/peers.jsonl 2> $out/r/peers.err || tail -3 $out/r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $out/r/b_default-pdl0_1.jsonl $out/r/peers.jsonl > $out/r/compare_pdl0.txt 2>&1
python3 compare.py $out/r/b_default-pdl1_1.jsonl $out/r/peers.jsonl > $out/r/compare_pdl1.txt 2>&1
python3 - $out/r <<'PY' | tee $out/r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/b_*.jsonl")):
    c, r = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j:
            res[j["name"]][c].append(j.get("fwd_ms", 0))
cfgs = sorted({c for n in res for c in res[n]})
for n, m in res.items():
    print(n)
    for c in cfgs:
        if c in m: print(f"   {c:24} " + " / ".join(f"{v:.4f}" for v in m[c]))
PY
cat $out/r/compare_pdl0.txt | tail -12
if command -v nsys > /dev/null; then
  for pdl in 0 1; do
    FLEXJIT_DECODE_PDL=$pdl timeout 90 nsys profile -o /tmp/prof$pdl --force-overwrite true ./flexjit bench --suite suite.json --only decode_sliding_alibi_b16_kv32k --no-bwd > /dev/null 2>&1
    nsys stats --report cuda_gpu_trace --format csv /tmp/prof$pdl.nsys-rep > $out/r/trace_pdl$pdl.csv 2>/dev/null
    nsys stats --report cuda_gpu_kern_sum /tmp/prof$pdl.nsys-rep 2>/dev/null | head -20 > $out/r/kern_pdl$pdl.txt
    head -c 300000 $out/r/trace_pdl$pdl.csv > /tmp/x && mv /tmp/x $out/r/trace_pdl$pdl.csv
  done
  cat $out/r/kern_pdl0.txt
else
  echo "no nsys"
fi
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf t2.tar.gz r && rm -rf r
