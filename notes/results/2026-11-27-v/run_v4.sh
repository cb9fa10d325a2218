#!/usr/bin/env bash
# Session (v) v4: the ordered backward's tile names read after the full barrier (the fix) and the
# guard dropped. 1) the backward GPU tests on the new build; 2) the diagnosis test (guard off,
# DIAG_NO_GUARD) with main's templates (tmpl_main) and the fixed ones, 20 runs each, alternating;
# 3) the deterministic mode's speed, main's templates vs the fix, two rounds, order alternating.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/v4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_v4t timeout 400 ./gpu_test_attention --gtest_filter='BwdGpu.*' > $r/bwd_tests.txt 2>&1
echo "bwd tests rc=$? $(grep -E '^\[  (PASSED|FAILED)' $r/bwd_tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E '^\[  FAILED|Failure' -A3 $r/bwd_tests.txt | head -30
for v in main fixed main fixed; do
  [ $v = main ] && tdir=$PWD/tmpl_main || tdir=$PWD/../../templates
  FLEXJIT_TEMPLATE_DIR=$tdir FLEXJIT_CACHE_DIR=/tmp/fc_v4_$v DIAG_NO_GUARD=1 FLEXJIT_DETERMINISTIC_DQ=ordered DIAG_RUNS=10 \
    timeout 100 ./gpu_test_diag --gtest_filter=BwdGpuDiag.* 2>&1 | grep -E '^BAD' | sed "s/^/diag $v: /"
done
echo "diag done $(( $(date +%s) - t0 )) s"
export FLEXJIT_AUTOTUNE=off FLEXJIT_DETERMINISTIC=1
for round in 1 2; do
  order="main fixed"; [ $round = 2 ] && order="fixed main"
  for v in $order; do
    [ $v = main ] && export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_main || export FLEXJIT_TEMPLATE_DIR=$PWD/../../templates
    export FLEXJIT_CACHE_DIR=/tmp/fc_v4b
    timeout 150 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,gqa_causal_d128,long_causal_d128 --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 60 ./flexjit bench --suite suite64x.json --only noop_d64,causal_d64 --json $r/${v}_$round.jsonl >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY'
import json, sys, statistics
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j
    return out
R = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2)] for v in ("main", "fixed")}
print(f"{'deterministic bwd TF/s':28} {'main':>12} {'fixed':>12}  fixed/main  bwd_mode")
for n in R["main"][0]:
    a = [x[n].get("bwd_tflops", 0) for x in R["main"]]; b = [x.get(n, {}).get("bwd_tflops", 0) for x in R["fixed"]]
    print(f"{n:28} {'/'.join(f'{y:.0f}' for y in a):>12} {'/'.join(f'{y:.0f}' for y in b):>12}  {statistics.median(b)/max(statistics.median(a),1e-9):.3f}  {R['fixed'][0].get(n,{}).get('bwd_mode','')}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
