#!/bin/bash
# zzs1 (build: statistics pairs also at tile head dim 128 where the score_mod is not the identity):
# the backward GPU tests those kernels run in (five processes at once, each its own kernel cache),
# then compute-sanitizer memcheck / racecheck / synccheck on two score-modded backwards via `run`.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzs1}; r=/tmp/zzs1r/r; mkdir -p $r $out
save() { (cd /tmp/zzs1r && tar czf $out/zzs1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 400 ./gpu_test_attention --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'BwdGpu.SuiteMods:BwdGpu.ScoreModsWithConstantFactors:BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets' &
go b 'BwdGpu.HeadDimsThatAreNoMultipleOf64:BwdGpu/GradientGemmsSpanOnlyTheTensorsColumns.*:BwdGpu/DqByTurnsOverTheTensorsColumns.*' &
go c 'RandomProblemsGpu.*' &
go d 'BufferGradGpu.*:NegativeScaleGpu.*:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.HeadDimsAndHalfPrecision' &
go e 'BwdGpu.WarpSpecializedFastDkdv*:BwdGpu.FastModeOnePerHeadDim:SeqLensGpu.WarpSpecializedBackward:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.Gqa8To1AndBshd:BwdGpu.OddLengthsAndDifferentLengths' &
# inputs for the sanitizer runs (odd lengths, GQA 2:1), made while the tests run
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for name, d in (("d128", 128), ("d96", 96)):
    np.save(f"/tmp/zin/q_{name}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{name}.npy", rng.standard_normal((1, 2, 397, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{name}.npy", rng.standard_normal((1, 2, 397, d)).astype(np.float32))
    np.save(f"/tmp/zin/do_{name}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
np.save("/tmp/zin/slope.npy", (2.0 ** (-8.0 * np.arange(1, 5) / 4)).astype(np.float32))
PY
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | head -40
save
san() { n=$1; tool=$2; shift 2
  FLEXJIT_CACHE_DIR=/tmp/fcs timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 ./flexjit run "$@" --out /tmp/zout_$n > $r/san_${n}_$tool.txt 2>&1
  echo "san $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
A=(--q /tmp/zin/q_d128.npy --k /tmp/zin/k_d128.npy --v /tmp/zin/v_d128.npy --do /tmp/zin/do_d128.npy --score "score + slope[h] * (kv_idx - q_idx)" --mask "q_idx >= kv_idx + 17" --buffer slope=/tmp/zin/slope.npy)
S=(--q /tmp/zin/q_d96.npy --k /tmp/zin/k_d96.npy --v /tmp/zin/v_d96.npy --do /tmp/zin/do_d96.npy --score "30.0 * tanh(score / 30.0)")
FLEXJIT_CACHE_DIR=/tmp/fcs ./flexjit run "${A[@]}" --check --out /tmp/zout_a > $r/check_a.txt 2>&1; echo "check alibi rc=$? $(tail -3 $r/check_a.txt | tr '\n' ' ')"
FLEXJIT_CACHE_DIR=/tmp/fcs ./flexjit run "${S[@]}" --check --out /tmp/zout_s > $r/check_s.txt 2>&1; echo "check softcap d96 rc=$? $(tail -3 $r/check_s.txt | tr '\n' ' ')"
for tool in memcheck synccheck racecheck; do san alibi128 $tool "${A[@]}"; san softcap96 $tool "${S[@]}"; done | tee $r/san.txt
echo "done $(( $(date +%s) - t0 )) s"; save
