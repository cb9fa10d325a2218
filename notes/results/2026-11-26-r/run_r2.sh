#!/usr/bin/env bash
# Session (r) r2: the forward's cross-tile S(0) with two Q buffers, now with the next tile
# published (its Q loaded) once this tile's first stages are loaded. A/B, two interleaved rounds,
# forward only: 47c817e (prev), the new binary with CROSS_TILE forced off (nocross: two Q
# buffers and the early publication only) and the new binary (new). Then the forward GPU tests
# and compute-sanitizer racecheck (hazard report) and synccheck on one ws forward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/r2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_CACHE_DIR=/tmp/fc_t
timeout 60 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedNextTileCrossesOver:FwdGpu.WarpSpecializedManyTilesPerCta' > $r/t0.txt 2>&1; echo "cross-over tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t0.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t0.txt | head -30
V="prev nocross new"
for round in 1 2; do
  for v in $V; do
    bin=./flexjit; [ $v = prev ] && bin=./flexjit_prev
    env=""; [ $v = nocross ] && env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_nocross"
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 100 $bin bench --suite suite.json --only noop_d128,causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,gqa_causal_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 $bin bench --suite suite64x.json --only causal_d64,sliding_window_d64,prefix_lm_d64 --no-bwd --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 $bin bench --suite suite256x.json --only causal_d256 --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.c $f.b > $f
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
print(f"{'problem':28} " + " ".join(f"{v:>12}" for v in V))
for n in runs["prev"][0]:
    cells = []
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        cells.append(f"{a[0]:5.0f}/{a[1]:<5.0f}")
    b = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["prev"])
    rat = " ".join(f"{sum(x.get(n, {}).get('fwd_tflops') or 0 for x in runs[v]) / max(b, 1):.3f}" for v in V[1:])
    print(f"{n:28} " + " ".join(cells) + "  x " + rat)
PY
export FLEXJIT_CACHE_DIR=/tmp/fc_t
for tool in racecheck synccheck; do
  left=$(( 420 - ($(date +%s) - t0) )); [ $left -gt 15 ] || { echo "$tool skipped: out of time"; continue; }
  extra=""; [ $tool = racecheck ] && extra="--racecheck-report hazard"
  timeout $(( left > 60 ? 60 : left )) compute-sanitizer --tool $tool $extra --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
grep -m 12 -A6 "Error" $r/san_racecheck.txt | head -60
left=$(( 575 - ($(date +%s) - t0) ))
timeout $(( left > 10 ? left - 5 : 5 )) ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecialized*:FwdGpu.SuiteMods:Configs/NanGpu.Forward*:FwdGpu.WideWarpSpecializedOnePerShape:FwdGpu.WideWarpSpecializedModsN176:-FwdGpu.WarpSpecializedNextTileCrossesOver:FwdGpu.WarpSpecializedManyTilesPerCta' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -40
grep -E '^\[ +(OK|FAILED) ' $r/t.txt | tr '\n' ' ' | head -c 3000; echo
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
