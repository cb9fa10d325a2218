#!/usr/bin/env bash
# Session (o) o1: the d256 deterministic backward's turns. A: the commit before (one turn per
# tile and slice, held across both dQ pieces; the old templates through FLEXJIT_TEMPLATE_DIR),
# B: a turn per piece (new), C: B with four chains at head dims above 128 (flexjit_4ch).
# All with the ordered sums forced; two rounds; the fast mode once. Then the ordered tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/o1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 90 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeSumsDqInOrder' > $r/t0.txt 2>&1; echo "smoke rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t0.txt | tr '\n' ' ')"; grep -A5 Failure $r/t0.txt | head -20
export FLEXJIT_DETERMINISTIC_DQ=ordered
for round in 1 2; do
  FLEXJIT_TEMPLATE_DIR=$PWD/old_templates timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/A_$round.jsonl > $r/A_$round.log 2>&1 || tail -3 $r/A_$round.log
  timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/B_$round.jsonl > $r/B_$round.log 2>&1 || tail -3 $r/B_$round.log
  timeout 100 ./flexjit_4ch bench --suite suite256.json --bwd-mode deterministic --json $r/C_$round.jsonl > $r/C_$round.log 2>&1 || tail -3 $r/C_$round.log
done
unset FLEXJIT_DETERMINISTIC_DQ
timeout 100 ./flexjit bench --suite suite256.json --json $r/F_1.jsonl > $r/F_1.log 2>&1 || tail -3 $r/F_1.log
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
runs = {k: [load(f"{d}/{k}_{i}.jsonl") for i in (1, 2)] for k in "ABCF"}
for n in runs["B"][0]:
    cell = lambda k: "/".join(f"{x.get(n, {}).get('bwd_tflops') or 0:.0f}" for x in runs[k] if x)
    print(f"{n:22} A(turn per tile) {cell('A')}  B(turn per piece) {cell('B')}  C(B + 4 chains) {cell('C')}  fast {cell('F')}")
PY
for tool in memcheck synccheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY' $r/san_$tool.log | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
