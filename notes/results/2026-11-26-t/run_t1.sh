#!/usr/bin/env bash
# Session (t) t1: s7's tickets-only claim (claim2): the persistent forward's producer takes its next
# ticket after issuing the tile's K/V loads, only where there are tickets (masked problems); the
# unmasked stride stays where it was. Five interleaved rounds, forward TF/s, then the ws forward
# tests and racecheck / synccheck on claim2.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base claim2"; R="1 2 3 4 5"
for round in $R; do
  for v in $V; do
    env=""; [ $v = base ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fct1_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 80 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,gqa_causal_d128,prefix_lm_d128,sliding_window_d128,document_causal_d128,document_nested_causal_d128,alibi_causal_d128,long_document_causal_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 40 ./flexjit bench --suite suite64x.json --only causal_d64,document_causal_d64 --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b > $f
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$V" "$R" <<'PY' | tee $r/summary.txt
import json, sys, statistics
d = sys.argv[1]; V = sys.argv[2].split(); R = sys.argv[3].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in R] for v in V}
print(f"{'problem (fwd TF/s)':28} " + " ".join(f"{v:>24}" for v in V) + "  median c2/base  rounds c2>base")
for n in runs["base"][0]:
    cells, med, per = [], {}, {}
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        per[v] = a; med[v] = statistics.median(a)
        cells.append("/".join(f"{y:.0f}" for y in a).rjust(24))
    wins = sum(c > b for b, c in zip(per["base"], per["claim2"]))
    print(f"{n:28} " + " ".join(cells) + f"  {med['claim2'] / max(med['base'], 1):.3f}  {wins}/{len(R)}")
PY
export FLEXJIT_CACHE_DIR=/tmp/fct1_claim2 FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_claim2
timeout 200 ./gpu_test_attention --gtest_filter='FwdGpu.SuiteMods:FwdGpu.GqaCausal:FwdGpu.OddLengths:FwdGpu.WarpSpecializedModsTwoConsumers:FwdGpu.WarpSpecializedManyTilesPerCta:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks:FwdGpu.WarpSpecializedOnePerHeadDim:FwdGpu.WarpSpecializedFullyMaskedRows' > $r/t_fwd.txt 2>&1; echo "fwd tests (claim2) rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_fwd.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t_fwd.txt | head -20
for tool in racecheck synccheck; do
  timeout 50 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
