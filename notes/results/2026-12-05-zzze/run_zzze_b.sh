#!/bin/bash
# (zzze) prepared, not run. Call B (carry .gpu/zzze; at most about 450 s, its parts in parallel
# processes): branch B's GPU tests of the diagonal values (forward and backward) and neighbours;
# `flexjit run
# --check` of forward + backward (--do) against float64 on odd shapes (Sq 333, Skv 517, GQA 3:1,
# per-sequence lengths, the forward's 192-row tiles) with B and B1; compute-sanitizer memcheck /
# racecheck / synccheck on the forward and backward kernels (kns=attention_) beside a per-head
# relative table at d64 (B) and d128 (B1).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzeb}; r=/tmp/zzzebr/r; mkdir -p $r $out
save() { (cd /tmp/zzzebr && tar czf $out/zzzeb.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for d in (64, 128):
    np.save(f"/tmp/zin/q_{d}.npy", rng.standard_normal((2, 6, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{d}.npy", rng.standard_normal((2, 2, 517, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{d}.npy", rng.standard_normal((2, 2, 517, d)).astype(np.float32))
    np.save(f"/tmp/zin/do_{d}.npy", rng.standard_normal((2, 6, 333, d)).astype(np.float32))
np.save("/tmp/zin/relh.npy", (2 * rng.standard_normal((6, 849))).astype(np.float32))
np.save("/tmp/zin/t5.npy", (3 * rng.standard_normal((6, 32))).astype(np.float32))
np.save("/tmp/zin/lens.npy", np.array([517, 300], dtype=np.int32))
np.save("/tmp/zin/qlens.npy", np.array([333, 201], dtype=np.int32))
PY
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 300 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'BwdGpu.ScoreDiagonalValues' &
go b 'BwdGpu.ScoreDiagonalValuesOutOfBounds:FwdGpu.ScoreDiagonalValues*' &
go c 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.SuiteMods:RandomProblemsGpu.*' &
T5="score + t5[h][where(kv_idx - q_idx > 0, 16, 0) + where(abs(kv_idx - q_idx) < 8, abs(kv_idx - q_idx), min(15, 8 + int(log(float(abs(kv_idx - q_idx)) / 8.0) / log(16.0) * 8.0)))]"
REL="score + relh[h][kv_idx - q_idx + 332]"
io() { echo --q /tmp/zin/q_$1.npy --k /tmp/zin/k_$1.npy --v /tmp/zin/v_$1.npy --do /tmp/zin/do_$1.npy --buffer relh=/tmp/zin/relh.npy --buffer t5=/tmp/zin/t5.npy; }
chk() { bin=$1 n=$2 d=$3; shift 3; FLEXJIT_CACHE_DIR=/tmp/fczc_$bin timeout 90 ./$bin run $(io $d) "$@" --check --out /tmp/zo_$n > $r/check_$n.txt 2>&1
  echo "check $bin $n rc=$? $(grep -hi 'error' $r/check_$n.txt | head -4 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
(chk flexjit rc64 64 --score "$REL" --mask "q_idx >= kv_idx" --bwd-mode fast
 chk flexjit r64 64 --score "$REL" --bwd-mode fast
 chk flexjit t64 64 --score "$T5" --bwd-mode fast
 chk flexjit rn192 64 --score "$REL" --config m192n128w12s2ws --bwd-mode fast
 chk flexjit rc64d 64 --score "$REL" --mask "q_idx >= kv_idx" --bwd-mode deterministic
 chk flexjit sl64 64 --score "$REL" --mask "q_idx >= kv_idx" --seq-lens /tmp/zin/lens.npy --q-lens /tmp/zin/qlens.npy --bwd-mode fast
 chk flexjit_b1 rc128 128 --score "$REL" --mask "q_idx >= kv_idx" --bwd-mode fast
 chk flexjit_b1 t128 128 --score "$T5" --bwd-mode fast
 chk flexjit_b1 sl128 128 --score "$REL" --mask "q_idx >= kv_idx" --seq-lens /tmp/zin/lens.npy --q-lens /tmp/zin/qlens.npy --bwd-mode fast) > $r/check.txt &
san() { bin=$1 n=$2 d=$3 tool=$4; shift 4
  FLEXJIT_CACHE_DIR=/tmp/fczs_$bin timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 --kernel-name kns=attention_ \
    ./$bin run $(io $d) "$@" --bwd-mode fast --out /tmp/zsan_${n}_$tool > $r/san_${n}_$tool.txt 2>&1
  echo "san $bin $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
for tool in memcheck racecheck synccheck; do
  (san flexjit rc64 64 $tool --score "$REL" --mask "q_idx >= kv_idx"
   san flexjit_b1 rc128 128 $tool --score "$REL" --mask "q_idx >= kv_idx") > $r/san_$tool.txt &
done
wait; cat $r/check.txt $r/san_memcheck.txt $r/san_racecheck.txt $r/san_synccheck.txt $r/rc.txt
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
echo "done $(( $(date +%s) - t0 )) s"; save
