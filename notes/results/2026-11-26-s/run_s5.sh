#!/usr/bin/env bash
# Session (s) s5: when the persistent forward's producer claims its next work tile. Today (base,
# the embedded templates of a6ebb6e) it takes the next ticket right after loading the current
# tile's Q, about a whole work tile ahead; claim takes it after issuing the tile's last K/V loads.
# (s4: releasing Q early, which also moves the claim earlier, cost causal / GQA / prefix LM 3-4 %.)
# Template A/B on one binary, three interleaved rounds, forward TF/s; then the ws forward tests
# and racecheck / synccheck on the claim variant.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base claim"
for round in 1 2 3; do
  for v in $V; do
    env=""; [ $v = base ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc5_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 80 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,gqa_causal_d128,prefix_lm_d128,sliding_window_d128,document_causal_d128,alibi_causal_d128,long_causal_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 40 ./flexjit bench --suite suite64x.json --only causal_d64,gqa_causal_d64 --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b > $f
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
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2, 3)] for v in V}
print(f"{'problem (fwd TF/s)':22} " + " ".join(f"{v:>14}" for v in V) + "  claim/base")
for n in runs["base"][0]:
    cells = []
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        cells.append("/".join(f"{y:.0f}" for y in a).rjust(14))
    b = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["base"])
    c = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["claim"])
    print(f"{n:22} " + " ".join(cells) + f"  {c / max(b, 1):.3f}  " + runs["base"][0].get(n, {}).get("fwd_config", ""))
PY
export FLEXJIT_CACHE_DIR=/tmp/fc5_claim FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_claim
timeout 120 ./gpu_test_attention --gtest_filter='FwdGpu.SuiteMods:FwdGpu.WarpSpecializedManyTilesPerCta:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks:FwdGpu.WarpSpecializedOnePerHeadDim:FwdGpu.WarpSpecializedFullyMaskedRows' > $r/t_fwd.txt 2>&1; echo "fwd tests (claim) rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_fwd.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t_fwd.txt | head -20
for tool in racecheck synccheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
