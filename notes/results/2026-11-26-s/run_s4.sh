#!/usr/bin/env bash
# Session (s) s4: Q in registers in the ws forward, which part helps and which hurts. Template A/B
# on one binary, two interleaved rounds, forward TF/s: base (a6ebb6e's templates); new (embedded:
# Q in registers at d64, Q's buffer released where it was, after the tile's last S); early (d64,
# released once the fragments are read, as s3's); d128 (new's form for head dims up to 128). Then
# the ws forward tests and racecheck / synccheck on the d128 variant.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base new early d128"
for round in 1 2; do
  for v in $V; do
    env=""; [ $v = new ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc4_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 60 ./flexjit bench --suite suite64x.json --only causal_d64,gqa_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 30 ./flexjit bench --suite suite64x.json --only noop_d64 --config m128n128w8s2ws --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    sed -E "s/\"name\": ?\"noop_d64\"/\"name\":\"noop_d64_ws\"/" $f.b > $f.c
    env $env timeout 60 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,prefix_lm_d128 --no-bwd --json $f.d >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.c $f.d > $f
    echo "  $v round $round $(( $(date +%s) - t0 )) s"
  done
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
print(f"{'problem (fwd TF/s)':22} " + " ".join(f"{v:>10}" for v in V) + "   x base: " + " ".join(V[1:]))
for n in runs["base"][0]:
    cells = []
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        cells.append("/".join(f"{y:.0f}" for y in a).rjust(10))
    b = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["base"])
    rat = " ".join(f"{sum(x.get(n, {}).get('fwd_tflops') or 0 for x in runs[v]) / max(b, 1):.3f}" for v in V[1:])
    print(f"{n:22} " + " ".join(cells) + "   " + rat + "  " + runs["base"][0].get(n, {}).get("fwd_config", ""))
PY
export FLEXJIT_CACHE_DIR=/tmp/fc4_d128 FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_d128
timeout 170 ./gpu_test_attention --gtest_filter='FwdGpu.SuiteMods:FwdGpu.WarpSpecializedModsTwoConsumers:FwdGpu.WarpSpecializedShapesBf16:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks:FwdGpu.WarpSpecializedOnePerHeadDim:FwdGpu.WarpSpecializedFullyMaskedRows:Configs/NanGpu.Forward*' > $r/t_fwd.txt 2>&1; echo "fwd tests (d128 variant) rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_fwd.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t_fwd.txt | head -20
for tool in racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
