#!/usr/bin/env bash
# Session (s) s3: Q in registers in the ws forward at head dim 64 (Q_IN_REGISTERS: S = Q K^T as an
# RS wgmma, Q's buffer freed once the fragments are read). Template A/B on one binary: base (the
# templates of a6ebb6e) against new (embedded), three interleaved rounds, forward TF/s, the d64
# suite on its defaults and noop d64 on the ws kernel. Then the forward GPU tests that run the ws
# kernel and the sanitizers on one ws forward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base new"
for round in 1 2 3; do
  for v in $V; do
    env=""; [ $v = new ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc3_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 100 ./flexjit bench --suite suite64x.json --only causal_d64,gqa_causal_d64,sliding_window_d64,document_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 40 ./flexjit bench --suite suite64x.json --only noop_d64 --config m128n128w8s2ws --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 40 ./flexjit bench --suite suite64x.json --only noop_d64 --no-bwd --json $f.d >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    sed -E "s/\"name\": ?\"noop_d64\"/\"name\":\"noop_d64_ws\"/" $f.b > $f.c
    cat $f.a $f.c $f.d > $f
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$V" <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; V = sys.argv[2].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2, 3)] for v in V}
print(f"{'problem (fwd TF/s)':22} " + " ".join(f"{v:>16}" for v in V) + "  new/base  config")
for n in runs["base"][0]:
    cells = []
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        cells.append("/".join(f"{y:.0f}" for y in a).rjust(16))
    b = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["base"])
    nn = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["new"])
    print(f"{n:22} " + " ".join(cells) + f"  {nn / max(b, 1):.3f}  " + runs["new"][0].get(n, {}).get("fwd_config", ""))
PY
export FLEXJIT_CACHE_DIR=/tmp/fc3_new
timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.SuiteMods:FwdGpu.WarpSpecialized*:Configs/NanGpu.Forward*:FwdGpu.FullyMaskedRowsGiveZeroAndMinusInfinity:FwdGpu.HalfPrecisionAndHeadDims:FwdGpu.OddLengths:FwdGpu.GqaCausal' > $r/t_fwd.txt 2>&1; echo "fwd tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_fwd.txt | tr '\n' ' ')"
grep -E '^\[  FAILED' $r/t_fwd.txt | head; grep -B2 -A8 Failure $r/t_fwd.txt | head -30
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
