#!/usr/bin/env bash
# Session (y) y4: template A/B on the landed binary (585a691), two interleaved rounds, fast
# backward TF/s: base (embedded: the landed templates), F (Pᵀ and dSᵀ registers fenced at the dK
# wait instead of the next tile's top), L (F + the tile's LSE read into registers before the Sᵀ
# wait). The better of F and L, where it gains 1 % or more (geometric mean), then runs the
# backward tests and compute-sanitizer.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/y4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
only=noop_d128,causal_d128,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128
V="base F L"
for round in 1 2; do
  vs=$V; [ $round = 2 ] && vs="L F base"
  for v in $vs; do
    env="FLEXJIT_TEMPLATE_DIR="; [ $v = base ] || env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    env $env timeout 150 ./flexjit bench --suite suite.json --only $only --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    echo "  $v round $round $(( $(date +%s) - t0 )) s"
  done
done
best=$(python3 - $r <<'PY'
import json, sys, math
d = sys.argv[1]; V = ["base", "F", "L"]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j.get("bwd_tflops") or 0
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2)] for v in V}
out = open(f"{d}/summary.txt", "w")
geo = {}
for v in V[1:]: geo[v] = []
print(f"{'bwd_tflops':26} " + " ".join(f"{v:>10}" for v in V) + "   x base", file=out)
for n in runs["base"][0]:
    cells = ["/".join(f"{x.get(n, 0):.0f}" for x in runs[v]).rjust(10) for v in V]
    b = sum(x.get(n, 0) for x in runs["base"])
    rats = []
    for v in V[1:]:
        q = sum(x.get(n, 0) for x in runs[v]) / max(b, 1); geo[v].append(q); rats.append(f"{q:.3f}")
    print(f"{n:26} " + " ".join(cells) + "   " + " ".join(rats), file=out)
g = {v: math.exp(sum(math.log(max(q, 1e-9)) for q in qs) / len(qs)) for v, qs in geo.items()}
print("geomean " + " ".join(f"{v} {x:.3f}" for v, x in g.items()), file=out)
v, x = max(g.items(), key=lambda kv: kv[1])
print(v if x >= 1.01 else "none")
PY
)
cat $r/summary.txt; echo "best: $best $(( $(date +%s) - t0 )) s"
if [ "$best" != none ]; then
  export FLEXJIT_CACHE_DIR=/tmp/fc_tests FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$best
  timeout 220 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.FullyMaskedRowsGiveZeroGradients' > $r/tests.txt 2>&1
  echo "tests ($best) rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -20
  for tool in racecheck synccheck memcheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeOnePerHeadDim > $r/san_$tool.txt 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ') $(grep 'Race reported between' $r/san_$tool.txt | grep -vc bulk_load) non-bulk_load races"
  done
fi
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf y4.tar.gz r && rm -rf r
