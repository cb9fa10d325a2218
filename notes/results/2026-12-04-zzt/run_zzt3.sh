#!/bin/bash
# zzt3 (build: O's rescale inside the forward's issue window; the fast dK/dV kernel's 32-bit
# reads for score_mod buffers beside a mask without any): the forward GPU tests, the backward
# buffer tests, problems drawn at random (six processes, each its own kernel cache); `run --check`
# against float64 and compute-sanitizer memcheck / synccheck / racecheck on one forward per head
# dim and on a table backward.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzt3}; r=/tmp/zzt3r/r; mkdir -p $r $out
save() { (cd /tmp/zzt3r && tar czf $out/zzt3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 420 ./gpu_test_attention --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'FwdGpu.*:-FwdGpu.WarpSpecialized*:FwdGpu.Wide*' &
go b 'FwdGpu.WarpSpecialized*' &
go c 'FwdGpu.Wide*:SeqLensGpu.*Forward*:SeqLensGpu.Wgmma*:NegativeScaleGpu.*:Configs/NanGpu.*:FwdGpu/OutputGemmSpansOnlyVsColumns.*:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks' &
go d 'RandomProblemsGpu.*' &
go e 'BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:BufferGradGpu.*:BwdGpu.SuiteMods:SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism:SeqLensGpu.HeadDimsThatAreNoMultipleOf64' &
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for d in (64, 128, 256):
    np.save(f"/tmp/zin/q_{d}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{d}.npy", rng.standard_normal((1, 2, 397, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{d}.npy", rng.standard_normal((1, 2, 397, d)).astype(np.float32))
    np.save(f"/tmp/zin/do_{d}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
np.save("/tmp/zin/rel.npy", rng.standard_normal((4, 2 * 397 - 1)).astype(np.float32))
PY
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | head -40
save
F64=(--q /tmp/zin/q_64.npy --k /tmp/zin/k_64.npy --v /tmp/zin/v_64.npy)
F128=(--q /tmp/zin/q_128.npy --k /tmp/zin/k_128.npy --v /tmp/zin/v_128.npy --score "30.0 * tanh(score / 30.0)" --mask "q_idx >= kv_idx + 17")
F256=(--q /tmp/zin/q_256.npy --k /tmp/zin/k_256.npy --v /tmp/zin/v_256.npy --mask "q_idx >= kv_idx")
B128=(--q /tmp/zin/q_128.npy --k /tmp/zin/k_128.npy --v /tmp/zin/v_128.npy --do /tmp/zin/do_128.npy --score "score + rel[h][kv_idx - q_idx + 396]" --mask "q_idx >= kv_idx" --buffer rel=/tmp/zin/rel.npy)
for n in F64 F128 F256 B128; do declare -n A=$n
  FLEXJIT_CACHE_DIR=/tmp/fcs ./flexjit run "${A[@]}" --check --out /tmp/zout_$n > $r/check_$n.txt 2>&1; echo "check $n rc=$? $(tail -4 $r/check_$n.txt | tr '\n' ' ')"
done | tee $r/check.txt
san() { n=$1; tool=$2; declare -n A=$n
  FLEXJIT_CACHE_DIR=/tmp/fcs timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 ./flexjit run "${A[@]}" --out /tmp/zsan_$n > $r/san_${n}_$tool.txt 2>&1
  echo "san $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
for tool in memcheck synccheck racecheck; do for n in F64 F128 F256 B128; do san $n $tool; done; done | tee $r/san.txt
echo "done $(( $(date +%s) - t0 )) s"; save
