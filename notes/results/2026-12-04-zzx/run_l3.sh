#!/bin/bash
# l3 (build: V(t-1)'s wait inside the forward's issue window, FA3's order): the forward GPU
# tests (four processes, each its own kernel cache); `run --check` against float64 and
# compute-sanitizer (memcheck, racecheck, synccheck) on forwards at d64, d128 and d256.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/l3}; r=/tmp/l3r/r; mkdir -p $r $out
save() { (cd /tmp/l3r && tar czf $out/l3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 230 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'FwdGpu.*:-FwdGpu.WarpSpecialized*:FwdGpu.Wide*:FwdGpu.ScoresThatPassTheRunningMaxLater:FwdGpu.SuiteMods:FwdGpu.HalfPrecisionAndHeadDims' &
go f 'FwdGpu.ScoresThatPassTheRunningMaxLater:FwdGpu.SuiteMods:FwdGpu.HalfPrecisionAndHeadDims' &
go b 'FwdGpu.WarpSpecialized*' &
go c 'FwdGpu.Wide*:SeqLensGpu.*Forward*:SeqLensGpu.Wgmma*:NegativeScaleGpu.*:Configs/NanGpu.*:FwdGpu/OutputGemmSpansOnlyVsColumns.*:FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks' &
go d 'RandomProblemsGpu.*' &
go e 'SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism:SeqLensGpu.HeadDimsThatAreNoMultipleOf64' &
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
np.save("/tmp/zin/bias.npy", rng.standard_normal((4, 333, 397)).astype(np.float32))
lens = [50, 91, 7, 120, 129]; ids = np.concatenate([np.full(n, i) for i, n in enumerate(lens)])
np.save("/tmp/zin/doc.npy", ids.astype(np.int32)); assert len(ids) == 397
PY
F64=(--q /tmp/zin/q_64.npy --k /tmp/zin/k_64.npy --v /tmp/zin/v_64.npy)
F128=(--q /tmp/zin/q_128.npy --k /tmp/zin/k_128.npy --v /tmp/zin/v_128.npy --score "30.0 * tanh(score / 30.0)" --mask "q_idx >= kv_idx + 17")
F256=(--q /tmp/zin/q_256.npy --k /tmp/zin/k_256.npy --v /tmp/zin/v_256.npy --mask "q_idx >= kv_idx")
B128=(--q /tmp/zin/q_128.npy --k /tmp/zin/k_128.npy --v /tmp/zin/v_128.npy --do /tmp/zin/do_128.npy --score "score + rel[h][kv_idx - q_idx + 396]" --mask "q_idx >= kv_idx" --buffer rel=/tmp/zin/rel.npy)
BD=(--q /tmp/zin/q_128.npy --k /tmp/zin/k_128.npy --v /tmp/zin/v_128.npy --do /tmp/zin/do_128.npy --score "score + bias[h][q_idx][kv_idx]" --mask "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx" --buffer bias=/tmp/zin/bias.npy --buffer doc=/tmp/zin/doc.npy)
BD64=(--q /tmp/zin/q_64.npy --k /tmp/zin/k_64.npy --v /tmp/zin/v_64.npy --do /tmp/zin/do_64.npy --score "score + bias[h][q_idx][kv_idx]" --mask "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx" --buffer bias=/tmp/zin/bias.npy --buffer doc=/tmp/zin/doc.npy)
FJ=(--q /tmp/zin/q_128.npy --k /tmp/zin/k_128.npy --v /tmp/zin/v_128.npy --score "score + float(kv_idx / 64) * 150.0 - float(q_idx % 5) * float(kv_idx) * 0.02")
(for n in F64 F128 F256 FJ; do declare -n A=$n
  FLEXJIT_CACHE_DIR=/tmp/fcs ./flexjit run "${A[@]}" --check --out /tmp/zout_$n > $r/check_$n.txt 2>&1; echo "check $n rc=$? $(tail -4 $r/check_$n.txt | tr '\n' ' ')"
done | tee $r/check.txt
san() { n=$1; tool=$2; declare -n A=$n
  FLEXJIT_CACHE_DIR=/tmp/fcs timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 ./flexjit run "${A[@]}" --out /tmp/zsan_$n > $r/san_${n}_$tool.txt 2>&1
  echo "san $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
(for n in F64 F128 F256 FJ; do san $n memcheck; san $n racecheck; san $n synccheck; done) | tee $r/san.txt
) > $r/checks_and_san.txt 2>&1 &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | head -40
cat $r/checks_and_san.txt
echo "done $(( $(date +%s) - t0 )) s"; save
