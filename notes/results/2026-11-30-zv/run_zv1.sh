#!/usr/bin/env bash
# (zv) call 1: head dims that are no multiple of 64 (tiles padded): the new GPU tests and the head-dim
# regression tests, in parallel processes; then flexjit bench on head_dims.json (fast backward).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv1}; r=/tmp/zv1r/r; mkdir -p $r $out
save() { (cd /tmp/zv1r && tar czf $out/zv1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in FwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.HeadDimsThatAreNoMultipleOf64 DecodeGpu.HeadDimsThatAreNoMultipleOf64 \
         FwdGpu.HalfPrecisionAndHeadDims BwdGpu.HeadDimsAndHalfPrecision DecodeGpu.HalfPrecisionAndHeadDims \
         FwdGpu.SuiteMods BwdGpu.SuiteMods BwdGpu.FastModeOnePerHeadDim FwdGpu.EveryBlockConfigShape; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$i timeout 330 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|error' $f | head -3 | tr '\n' ' ')"; done
grep -h -A3 'Failure' $r/test_*.log | head -40
save
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left ./flexjit bench --suite head_dims.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "bench $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys
for line in open(sys.argv[1] + "/flexjit.jsonl"):
    if '"name"' in line:
        o = json.loads(line); print(f"{o['name']:20s} fwd {o.get('fwd_tflops',0):6.1f} bwd {o.get('bwd_tflops',0):6.1f} first {o.get('first_call_ms',0):7.1f} ms")
PY
save
