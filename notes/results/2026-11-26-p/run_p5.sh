#!/usr/bin/env bash
# Session (p) p5: the dQ accumulator's layout XOR-ing 32-byte chunks (within 64-column groups) so
# that the staging stores are conflict-free, against 1ff2630's 16-byte chunks (tmpl_prev: the
# same binary, the commit's templates), fast and ordered backward at d64, d128 and d256, two
# interleaved rounds; then the backward GPU tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/p5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run() {  # variant mode round
  local env=""; [ $1 = prev ] && env="FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_prev"
  local det=""; [ $2 = ord ] && det="--bwd-mode deterministic"
  env $env FLEXJIT_DETERMINISTIC_DQ=ordered timeout 90 ./flexjit bench --suite suite64x.json --only noop_d64,causal_d64,gqa_causal_d64,softcap_causal_d64 $det --json $r/$1_$2_$3.jsonl > $r/$1_$2_$3.log 2>&1 || tail -2 $r/$1_$2_$3.log
  env $env FLEXJIT_DETERMINISTIC_DQ=ordered timeout 90 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,alibi_causal_d128,gqa_causal_d128 $det --json $r/$1_$2_$3.jsonl.b > $r/$1_$2_$3.logb 2>&1 || tail -2 $r/$1_$2_$3.logb
  env $env FLEXJIT_DETERMINISTIC_DQ=ordered timeout 90 ./flexjit bench --suite suite256x.json --only noop_d256,causal_d256,gqa_causal_d256 $det --json $r/$1_$2_$3.jsonl.c > $r/$1_$2_$3.logc 2>&1 || tail -2 $r/$1_$2_$3.logc
  cat $r/$1_$2_$3.jsonl.b $r/$1_$2_$3.jsonl.c >> $r/$1_$2_$3.jsonl
}
for round in 1 2; do for v in prev new; do for m in fast ord; do run $v $m $round; done; done; done
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
for mode in ("fast", "ord"):
    pr = [load(f"{d}/prev_{mode}_{i}.jsonl") for i in (1, 2)]; nw = [load(f"{d}/new_{mode}_{i}.jsonl") for i in (1, 2)]
    for n in nw[0]:
        a = [x.get(n, {}).get("bwd_tflops") or 0 for x in pr]; b = [x.get(n, {}).get("bwd_tflops") or 0 for x in nw]
        print(f"{mode:4} {n:24} prev {a[0]:.0f}/{a[1]:.0f}  new {b[0]:.0f}/{b[1]:.0f}  x {sum(b)/max(sum(a),1):.3f}  {nw[0][n].get('bwd_mode','')}")
PY
timeout $(( 585 - ($(date +%s) - t0) )) ./gpu_test_attention --gtest_filter='BwdGpu.SuiteMods:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.HopperWgmmaPath:BwdGpu.Gqa8To1AndBshd:BwdGpu.OddLengthsAndDifferentLengths' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
