#!/bin/bash
# (zzzc, second call) carry .gpu/zzzd; about 450 s: arm SE (79785a5: a tile's score column values
# staged while its S GEMM runs) against SD (6f7ac7f: staged after S landed). Kernels without
# score column values are SASS identical between them.
# 1. gta's forward tests that reach score column values, in parallel processes, against float64.
# 2. `flexjit run --check` and compute-sanitizer memcheck / racecheck / synccheck on a per-key bias
#    forward (Sq 333, Skv 901, GQA 3:1) at d64 and d128.
# 3. A/B SD / SE over bias_tables.json (forward ms, rounds alternating).
# 4. ncu on the per-key bias causal d64 forward (SE).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzds}; r=/tmp/zzzdsr/r; mkdir -p $r $out
save() { (cd /tmp/zzzdsr && tar czf $out/zzzds.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 200 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'FwdGpu.ScoreColumnValues:FwdGpu.WarpSpecializedModsTwoConsumers*:FwdGpu.WarpSpecializedModsOneConsumer*' &
go b 'FwdGpu.ScoreColumnValuesOutOfBounds:FwdGpu.OutOfBounds*:ErrorWordsGpu.*:NanGpu*:FwdGpu.BufferReads*' &
go c 'FwdGpu.WarpSpecializedModsHeadDim*:FwdGpu.WarpSpecializedModsThreeStages*:FwdGpu.WarpSpecializedModsTwoCtasPerSm*:FwdGpu.WarpSpecializedRowsPastTheQueriesEnd*:FwdGpu.OddLengths' &
go d 'BufferGradGpu.*' &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
save
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for d in (64, 128):
    np.save(f"/tmp/zin/q_{d}.npy", rng.standard_normal((2, 6, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{d}.npy", rng.standard_normal((2, 2, 901, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{d}.npy", rng.standard_normal((2, 2, 901, d)).astype(np.float32))
np.save("/tmp/zin/kb.npy", (2.0 * rng.standard_normal((2, 901))).astype(np.float32))
PY
io() { echo --q /tmp/zin/q_$1.npy --k /tmp/zin/k_$1.npy --v /tmp/zin/v_$1.npy --buffer kb=/tmp/zin/kb.npy; }
for d in 64 128; do
  FLEXJIT_CACHE_DIR=/tmp/fcc ./flexjit run $(io $d) --score "score + kb[b][kv_idx]" --mask "q_idx + 300 >= kv_idx" \
    --check --out /tmp/zout_$d > $r/check_$d.txt 2>&1; echo "check d$d rc=$? $(tail -3 $r/check_$d.txt | tr '\n' ' ')"
done
san() { d=$1 tool=$2
  FLEXJIT_CACHE_DIR=/tmp/fcs_$tool timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 \
    --kernel-name kns=attention_fwd ./flexjit run $(io $d) --score "score + kb[b][kv_idx]" --mask "q_idx + 300 >= kv_idx" \
    --out /tmp/zsan_${d}_$tool > $r/san_${d}_$tool.txt 2>&1
  echo "san d$d $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${d}_$tool.txt | tr '\n' ' ')"; }
for tool in memcheck racecheck synccheck; do (san 64 $tool; san 128 $tool) > $r/san_$tool.txt & done
wait; cat $r/san_memcheck.txt $r/san_racecheck.txt $r/san_synccheck.txt
save
left=$(( 470 - ($(date +%s) - t0) ))
[ $left -gt 100 ] && bash ab2.sh zs bias_tables.json fwd_ms $(( left - 90 )) 4 "--no-bwd" SD:./flexjit_SD: SE:./flexjit: \
  2>&1 | grep -v "^zs "
cp /tmp/zsr/r/ab.txt $r/ab.txt 2>/dev/null; cp /tmp/zsr/r/*.jsonl $r/ 2>/dev/null
save
# 4. Where the time goes (ncu, one launch each): per-key bias causal d64 (SD) beside noop causal d64.
nc() { FLEXJIT_CACHE_DIR=/tmp/fcn timeout 120 /usr/local/cuda/bin/ncu --section SpeedOfLight --section WarpStateStats \
    --section InstructionStats --section ComputeWorkloadAnalysis -k regex:flexjit_attention_fwd -c 1 \
    ./flexjit bench --suite $1 --only $2 --no-bwd > $r/ncu_$2.txt 2>&1; echo "ncu $2 rc=$?"; }
[ $(( $(date +%s) - t0 )) -lt 500 ] && nc bias_tables.json keybias_causal_d64
echo "done $(( $(date +%s) - t0 )) s"; save
