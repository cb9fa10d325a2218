#!/usr/bin/env bash
# Session (m) m1: the forward's online softmax, A/B in one process per variant (FLEXJIT_TEMPLATE_DIR):
# base = HEAD's templates; w4 = four interleaved chains per row reduction; s8 = w4 + a running max
# that moves only by more than 2^8 (warps skip rescaling O); s8eN = s8 + every N-th 8-column
# tile's exp2 on the FMA pipe. Two interleaved rounds, forward only. Then the forward GPU tests
# on the working tree's default (s8).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/m1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
fwd=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,document_causal_d128
for k in 1 2; do
  for v in base w4 s8 s8e4 s8e2; do
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 60 ./flexjit bench --suite suite.json --only "$fwd" --no-bwd --json $r/b_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v failed"; tail -3 $r/err_$v.txt; }
    FLEXJIT_TEMPLATE_DIR=$PWD/t_$v timeout 30 ./flexjit bench --suite suite.json --only noop_d64,causal_d64 --config m192n128w12s2ws --no-bwd --json $r/c_${v}_$k.jsonl > /dev/null 2>$r/err_$v.txt || { echo "$v ws64 failed"; tail -3 $r/err_$v.txt; }
  done
  echo "round $k $(( $(date +%s) - t0 )) s"
  [ $(( $(date +%s) - t0 )) -gt 300 ] && break
done
python3 - $r <<'PY' | tee $r/ab.txt
import json, sys, glob, os, collections
d = sys.argv[1]
res = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/[bc]_*.jsonl")):
    kind = os.path.basename(f)[0]
    v, k = os.path.basename(f)[2:-6].rsplit("_", 1)
    for j in map(json.loads, open(f)):
        if "name" in j: res[j["name"] + ("" if kind == "b" else " ws3")][v].append(j.get("fwd_tflops", 0))
for n, m in res.items():
    print(f"{n:26} " + "  ".join(f"{c} " + "/".join(f"{x:.0f}" for x in m[c]) for c in ["base", "w4", "s8", "s8e4", "s8e2"] if c in m))
PY
timeout 240 ./gpu_test_attention --gtest_filter='FwdGpu.*:NegativeScaleGpu.*:Configs/NanGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -A6 Failure $r/t.txt | head -30
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
