#!/usr/bin/env bash
# Session (y) y2: template A/B on one binary, three interleaved rounds, fast backward TF/s: base (main),
# k2 (y1: dK k-steps 2-3 after dQ, waited for after the dQ staging), k2L (dK waited for at the tile end,
# the LSE read ahead of the S wait), k1L (k2L with one k-step first). Deterministic once; then tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/y2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V=${V:-"base k2 k2L k1L"}
only=noop_d128,causal_d128,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128
for round in ${ROUNDS:-1 2 3}; do
  vs=$V; [ $((round % 2)) = 0 ] && vs=$(echo $V | tr ' ' '\n' | tac | tr '\n' ' ')
  for v in $vs; do
    env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v"
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    env $env timeout 150 ./flexjit bench --suite suite.json --only $only --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    env $env timeout 60 ./flexjit bench --suite suite64x.json --only noop_d64,causal_d64 --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b > $f
    echo "  $v round $round $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r "$V" "${ROUNDS:-1 2 3}" <<'PY' | tee $r/summary.txt
import json, sys
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
for key in ("bwd_tflops",):
    print(f"{key:26} " + " ".join(f"{v:>12}" for v in V) + "   x base")
    for n in runs["base"][0]:
        cells = []
        for v in V:
            a = [x.get(n, {}).get(key) or 0 for x in runs[v]]
            cells.append("/".join(f"{y:.0f}" for y in a).rjust(12))
        b = sum(x.get(n, {}).get(key) or 0 for x in runs["base"])
        rat = " ".join(f"{sum(x.get(n, {}).get(key) or 0 for x in runs[v]) / max(b, 1):.3f}" for v in V[1:])
        print(f"{n:26} " + " ".join(cells) + "   " + rat)
PY
for v in base k2L; do
  FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_$v FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 60 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,document_causal_d128 --bwd-mode deterministic --json $r/${v}_det.jsonl > $r/${v}_det.log 2>&1 || tail -2 $r/${v}_det.log
  echo "det $v: $(grep -o '"bwd_tflops":[0-9.]*' $r/${v}_det.jsonl | tr '\n' ' ')"
done
left=$(( ${BUDGET:-560} - ($(date +%s) - t0) ))
if [ $left -gt 150 ]; then
  FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout $(( left - 10 )) ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.FastModeOnePerHeadDim' > $r/tests.txt 2>&1
  echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
fi
cd $out && tar czf y2.tar.gz r && rm -rf r
