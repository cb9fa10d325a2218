#!/usr/bin/env bash
# Session (r) r6: part of the d64 forward's exponentials on the FMA pipe (exp2_emulated).
# Template A/B on one binary, two interleaved rounds, forward only, the d64 suite with the
# defaults and noop d64 on the ws kernel: every 8th score tile emulated (e8, the embedded
# templates), every 4th (e4), every 16th (e16), none (e0, the previous behaviour). Then the
# forward GPU tests that run d64 on the ws kernel and the NaN tests, and the sanitizers on one
# ws forward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/r6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_CACHE_DIR=/tmp/fc_t
timeout 120 ./gpu_test_attention --gtest_filter='FwdGpu.SuiteMods:FwdGpu.WarpSpecializedModsTwoConsumers:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks:FwdGpu.WarpSpecializedOnePerHeadDim:Configs/NanGpu.Forward*:FwdGpu.FullyMaskedRowsGiveZeroAndMinusInfinity:FwdGpu.WarpSpecializedFullyMaskedRows' > $r/t0.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t0.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t0.txt | head -30
for tool in racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
V="e0 e8 e4 e16"
for round in 1 2; do
  for v in $V; do
    env=""; [ $v = e8 ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 80 ./flexjit bench --suite suite64x.json --only causal_d64,gqa_causal_d64,sliding_window_d64,document_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 40 ./flexjit bench --suite suite64x.json --only noop_d64 --config m128n128w8s2ws --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    sed 's/"name": "noop_d64"/"name": "noop_d64_ws"/' $f.b > $f.c
    cat $f.a $f.c > $f
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
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2)] for v in V}
print(f"{'problem':22} " + " ".join(f"{v:>11}" for v in V))
for n in runs["e0"][0]:
    cells = []
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        cells.append(f"{a[0]:5.0f}/{a[1]:<5.0f}")
    b = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["e0"])
    rat = " ".join(f"{sum(x.get(n, {}).get('fwd_tflops') or 0 for x in runs[v]) / max(b, 1):.3f}" for v in V[1:])
    print(f"{n:22} " + " ".join(cells) + "  x " + rat + "  " + runs["e8"][0].get(n, {}).get("fwd_config", ""))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
