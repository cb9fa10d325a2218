#!/bin/bash
# (zzzd) call 2 (carry .gpu/zzzd; about 560 s). tv_FMu = the branch bwd-fm's templates: dSᵀ by
# stmatrix (M) everywhere, the late dQ hand-over (F) only without mask and score_mod; gta = its
# GPU tests (those templates embedded).
# 1. A/B of the fast backward, main / M / FMu, rounds alternating, on ten suite rows (no long ones).
# 2. Correctness of FMu in parallel processes: the backward GPU tests against float64, `flexjit run
#    --check` (Sq 333, Skv 901, GQA 2:1) at d64 / d128 / d256, and compute-sanitizer memcheck /
#    racecheck / synccheck on the dK/dV kernel; M alone (tv_M) on a smaller test set.
# 3. Time left: the deterministic mode, main / FMu, on the dense rows.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzdb}; r=/tmp/zzzdbr/r; mkdir -p $r $out
save() { (cd /tmp/zzzdbr && tar czf $out/zzzdb.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
ONLY=noop_d128,noop_d64,causal_d128,causal_d64,alibi_causal_d128,document_causal_d128,sliding_window_d128,gqa_causal_d128,softcap_causal_d128,prefix_lm_d128
bash ab2.sh zf suite.json bwd_ms ${AB_UNTIL:-200} 8 "--only $ONLY" main:./flexjit: M:./flexjit:$PWD/tv_M/templates \
  FMu:./flexjit:$PWD/tv_FMu/templates 2>&1 | grep -v "^zf "
cp /tmp/zfr/r/ab.txt $r/ab.txt 2>/dev/null; cp /tmp/zfr/r/*.jsonl $r/ 2>/dev/null
echo "ab done $(( $(date +%s) - t0 )) s"; save
export FLEXJIT_AUTOTUNE=off
go() { n=$1; tv=$2; f=$3; FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 220 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a "" 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.WarpSpecializedFastDkdv' &
go b "" 'BwdGpu.SuiteMods:BwdGpu.QueryTilesPastTheQueriesEndAreLeftOut:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches' &
go c "" 'BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsThatAreNoMultipleOf64' &
go d "" 'BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128:BwdGpu.OddLengthsAndDifferentLengths' &
go e "" '*GradientGemmsSpanOnlyTheTensorsColumns*:*DqByTurnsOverTheTensorsColumns*:BwdGpu.HopperWgmmaPath:BwdGpu.FastModeOnePerHeadDim:BwdGpu.Gqa8To1AndBshd' &
go f "" 'SeqLensGpu.*Backward*:SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages:RandomProblemsGpu.*' &
go g "" 'BwdGpu.OrderedModeLongDocuments:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeSplitsGqaGroupsOverCtas:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BufferGradGpu.*' &
go hM $PWD/tv_M/templates 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeOnePerHeadDim' &
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for d in (64, 128, 256):
    np.save(f"/tmp/zin/q_{d}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{d}.npy", rng.standard_normal((1, 2, 901, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{d}.npy", rng.standard_normal((1, 2, 901, d)).astype(np.float32))
    np.save(f"/tmp/zin/do_{d}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
PY
export FLEXJIT_TEMPLATE_DIR=$PWD/tv_FMu/templates FLEXJIT_CACHE_DIR=/tmp/fczc
JUMP="score + float(kv_idx / 64) * 150.0 - float(q_idx % 5) * float(kv_idx) * 0.02"
io() { echo --q /tmp/zin/q_$1.npy --k /tmp/zin/k_$1.npy --v /tmp/zin/v_$1.npy --do /tmp/zin/do_$1.npy; }
run_case() { n=$1 d=$2; shift 2; ./flexjit run $(io $d) "$@" --check --out /tmp/zout_$n > $r/check_$n.txt 2>&1
  echo "check $n rc=$? $(tail -6 $r/check_$n.txt | tr '\n' ' ')"; }
(run_case c64 64 --score "$JUMP" --mask "q_idx + 568 >= kv_idx"
 run_case n64 64
 run_case c128 128 --score "$JUMP" --mask "q_idx + 568 >= kv_idx"
 run_case s128 128 --score "30.0 * tanh(score / 30.0)" --mask "q_idx + 568 >= kv_idx"
 run_case n128 128
 run_case c256 256 --score "$JUMP" --mask "q_idx + 568 >= kv_idx") > $r/check.txt
san() { n=$1 d=$2 tool=$3; shift 3
  timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 --kernel-name kns=attention_bwd_dkdv \
    ./flexjit run $(io $d) "$@" --out /tmp/zsan_${n}_$tool > $r/san_${n}_$tool.txt 2>&1
  echo "san $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
for tool in memcheck racecheck synccheck; do
  (san n64 64 $tool; san n128 128 $tool; san c128 128 $tool --mask "q_idx + 568 >= kv_idx"
   san c256 256 $tool --mask "q_idx + 568 >= kv_idx") > $r/san_$tool.txt &
done
wait; cat $r/check.txt $r/san_memcheck.txt $r/san_racecheck.txt $r/san_synccheck.txt $r/rc.txt
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
save
unset FLEXJIT_TEMPLATE_DIR FLEXJIT_CACHE_DIR
left=$(( ${DET_UNTIL:-540} - ($(date +%s) - t0) ))
if [ $left -gt 80 ]; then
  bash ab2.sh zd suite.json bwd_ms $(( left - 50 )) 4 "--bwd-mode deterministic --only noop_d128,causal_d128,noop_d64,alibi_causal_d128" \
    main:./flexjit: FMu:./flexjit:$PWD/tv_FMu/templates 2>&1 | grep -v "^zd "
  cp /tmp/zdr/r/ab.txt $r/ab_det.txt 2>/dev/null
fi
echo "done $(( $(date +%s) - t0 )) s"; save
