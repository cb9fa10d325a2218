#!/usr/bin/env bash
# Session (o) o3: the forward's lean form at d256. flexjit_prev (c014b38: no overlap at d256)
# against flexjit (the full form, overlapped, where ptxas reports no spills; the lean one where it
# does), forward only, three interleaved rounds on the d256 problems plus two d128 controls. Then
# the forward GPU tests and compute-sanitizer on the d256 ws mods.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/o3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for round in 1 2 3; do
  for b in prev new; do
    bin=./flexjit; [ $b = prev ] && bin=./flexjit_prev
    timeout 100 $bin bench --suite suite256x.json --no-bwd --json $r/${b}_$round.jsonl > $r/${b}_$round.log 2>&1 || tail -3 $r/${b}_$round.log
    timeout 100 $bin bench --suite suite.json --only noop_d128,causal_d128 --no-bwd --json $r/${b}128_$round.jsonl > $r/${b}128_$round.log 2>&1 || tail -3 $r/${b}128_$round.log
  done
done
echo "bench $(( $(date +%s) - t0 )) s"
grep -h "lean_registers\|fwd.*d256" $r/new_1.log | head -20 > $r/new_kernels.txt
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
for pre in ("", "128"):
    runs = {k: [load(f"{d}/{k}{pre}_{i}.jsonl") for i in (1, 2, 3)] for k in ("prev", "new")}
    for n in runs["new"][0]:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs["prev"]]
        b = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs["new"]]
        kern = runs["new"][0][n].get("fwd_kernel", runs["new"][0][n].get("fwd_config", ""))
        print(f"{n:24} fwd before {'/'.join(f'{v:.0f}' for v in a)}  now {'/'.join(f'{v:.0f}' for v in b)}  x {sum(b)/max(sum(a),1):.3f}  {kern}")
PY
timeout 280 ./gpu_test_attention --gtest_filter='FwdGpu.*' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
grep -E '^\[ +(OK|FAILED) ' $r/t.txt
for tool in memcheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedModsHeadDim256' > $r/san_$tool.log 2>&1; echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY' $r/san_$tool.log | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
