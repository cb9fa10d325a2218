#!/bin/bash
# (zzz) call 4 (carry .gpu/zzy): the branch lazy-every-warpgroup-count's changed kernels (tvW
# templates; m192 lazy without a mask, one consumer warpgroup at d64 and d128) through
# `flexjit run --check` against float64 and compute-sanitizer memcheck / racecheck / synccheck.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzc}; r=/tmp/zzzcr/r; mkdir -p $r $out
save() { (cd /tmp/zzzcr && tar czf $out/zzzc.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
export FLEXJIT_TEMPLATE_DIR=$PWD/tvW/templates FLEXJIT_CACHE_DIR=/tmp/fczc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
# tvx: A's --tv DIR (the arm's templates, else tvW) into FLEXJIT_TEMPLATE_DIR, the rest into B.
tvx() { B=(); export FLEXJIT_TEMPLATE_DIR=$PWD/tvW/templates; local i=0; while [ $i -lt ${#A[@]} ]; do
  if [ "${A[$i]}" = --tv ]; then i=$((i+1)); export FLEXJIT_TEMPLATE_DIR=${A[$i]}; else B+=("${A[$i]}"); fi; i=$((i+1)); done; }
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for d in (64, 128):
    np.save(f"/tmp/zin/q_{d}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{d}.npy", rng.standard_normal((1, 2, 901, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{d}.npy", rng.standard_normal((1, 2, 901, d)).astype(np.float32))
PY
JUMP="score + float(kv_idx / 64) * 150.0 - float(q_idx % 5) * float(kv_idx) * 0.02"
W192=(--q /tmp/zin/q_64.npy --k /tmp/zin/k_64.npy --v /tmp/zin/v_64.npy --config m192n128w12s2ws)
W192J=(--q /tmp/zin/q_64.npy --k /tmp/zin/k_64.npy --v /tmp/zin/v_64.npy --config m192n128w12s2ws --score "$JUMP")
W1D64=(--q /tmp/zin/q_64.npy --k /tmp/zin/k_64.npy --v /tmp/zin/v_64.npy --config m64n128w4s2ws --score "$JUMP" --mask "q_idx + 568 >= kv_idx")
S128=(--q /tmp/zin/q_128.npy --k /tmp/zin/k_128.npy --v /tmp/zin/v_128.npy --config m128n64w4s2 --score "$JUMP" --mask "q_idx + 568 >= kv_idx" --tv $PWD/tvS/templates)
W1D128=(--q /tmp/zin/q_128.npy --k /tmp/zin/k_128.npy --v /tmp/zin/v_128.npy --config m64n64w4s2ws --score "$JUMP")
(for n in W192 W192J W1D64 W1D128 S128; do declare -n A=$n; tvx; 
  ./flexjit run "${B[@]}" --check --out /tmp/zout_$n > $r/check_$n.txt 2>&1; echo "check $n rc=$? $(tail -4 $r/check_$n.txt | tr '\n' ' ')"
done) | tee $r/check.txt
save
san() { n=$1; tool=$2; declare -n A=$n; tvx
  timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 ./flexjit run "${B[@]}" --out /tmp/zsan_$n > $r/san_${n}_$tool.txt 2>&1
  echo "san $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
(for n in W192J W1D64 W1D128 S128; do san $n memcheck; san $n racecheck; san $n synccheck; done) | tee $r/san.txt
echo "done $(( $(date +%s) - t0 )) s"; save
