#!/usr/bin/env bash
# Session (t) t3: Q in registers in the d64 ws forward (s4's patch, Q's buffer released where it is
# today), on top of t2's ticket claim (both binaries are HEAD 738ca49; qreg with the patch
# applied). d64 suite, five interleaved rounds, the order alternating; then the d64-covering ws
# forward tests and racecheck / synccheck on the qreg test binary.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base qreg"; R="1 2 3 4 5"
for round in $R; do
  order=$V; [ $((round % 2)) = 0 ] && order=$(echo $V | awk '{print $2, $1}')
  for v in $order; do
    bin=./flexjit; [ $v = base ] || bin=./flexjit_$v
    export FLEXJIT_CACHE_DIR=/tmp/fct3_$v
    f=$r/${v}_$round.jsonl
    timeout 80 $bin bench --suite suite64x.json --no-bwd --json $f > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
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
a, b = V
print(f"{'problem (fwd TF/s)':28} " + " ".join(f"{v:>24}" for v in V) + f"  median {b}/{a}  rounds up  config")
for n in runs[a][0]:
    cells, med, per = [], {}, {}
    for v in V:
        x = [y.get(n, {}).get("fwd_tflops") or 0 for y in runs[v]]
        per[v] = x; med[v] = statistics.median(x)
        cells.append("/".join(f"{y:.0f}" for y in x).rjust(24))
    wins = sum(c > p for p, c in zip(per[a], per[b]))
    print(f"{n:28} " + " ".join(cells) + f"  {med[b] / max(med[a], 1):.3f}  {wins}/{len(R)}  " + runs[a][0][n].get("fwd_config", ""))
PY
export FLEXJIT_CACHE_DIR=/tmp/fct3_qregt
timeout 200 ./gpu_test_attention_qreg --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim:FwdGpu.WarpSpecializedShapesBf16:FwdGpu.WarpSpecializedShapesF16:FwdGpu.HalfPrecisionAndHeadDims:FwdGpu.WarpSpecializedModsOneConsumer:FwdGpu.WarpSpecializedFullyMaskedRows:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks' > $r/t_fwd.txt 2>&1; echo "fwd tests (qreg) rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_fwd.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t_fwd.txt | head -20
for tool in racecheck synccheck memcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention_qreg --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
