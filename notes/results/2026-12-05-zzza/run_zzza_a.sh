#!/bin/bash
# (zzza) prepared, not run (no device this session). Call 1 (carry .gpu/zzza; about 450 s):
# the branch bwd-late-dq-fence's backward against float64 before any timing.
# 1. gta (the branch's GPU tests, its templates = arm FM) in parallel processes: every fast-mode
#    backward test that reaches the warp-specialised dK/dV kernel, the ordered mode's (arm M
#    changes its dSᵀ stores too), per-sequence lengths, random problems; then arms F and M alone
#    (FLEXJIT_TEMPLATE_DIR) on a smaller set.
# 2. `flexjit run --do --check` (fresh random inputs, Sq 333, Skv 901, GQA 2:1) under FM at head
#    dims 64, 128 and 256, causal + a score that passes the running max later, and soft-capping;
#    then compute-sanitizer memcheck / racecheck / synccheck on the same calls.
# 3. The deterministic mode's A/B, main / FM, if time is left.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzaa}; r=/tmp/zzzaar/r; mkdir -p $r $out
save() { (cd /tmp/zzzaar && tar czf $out/zzzaa.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; tv=$2; f=$3; FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 240 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a "" 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.WarpSpecializedFastDkdv' &
go b "" 'BwdGpu.SuiteMods:BwdGpu.QueryTilesPastTheQueriesEndAreLeftOut:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches' &
go c "" 'BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsThatAreNoMultipleOf64' &
go d "" 'BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128:BwdGpu.OddLengthsAndDifferentLengths' &
go e "" '*GradientGemmsSpanOnlyTheTensorsColumns*:*DqByTurnsOverTheTensorsColumns*:BwdGpu.HopperWgmmaPath:BwdGpu.FastModeOnePerHeadDim:BwdGpu.Gqa8To1AndBshd' &
go f "" 'SeqLensGpu.*Backward*:SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages:RandomProblemsGpu.*' &
go g "" 'BwdGpu.OrderedModeLongDocuments:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeSplitsGqaGroupsOverCtas:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt' &
go hF $PWD/tv_F/templates 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeOnePerHeadDim' &
go iM $PWD/tv_M/templates 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeOnePerHeadDim' &
# WITH_S=1: arm S's buffer-read tests (gta_S, the branch score-reads-select-address) beside them.
[ "${WITH_S:-0}" = 1 ] && (FLEXJIT_CACHE_DIR=/tmp/fct_s timeout 240 ./gta_S \
  --gtest_filter='*BufferReadsWithThirtyTwoAndSixtyFourBitOffsets*:ErrorWordsGpu.*:BufferGradGpu.*:FwdGpu.SuiteMods:BwdGpu.SuiteMods' \
  > $r/tests_S.txt 2>&1; echo "tests_S rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt) &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
save
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
export FLEXJIT_TEMPLATE_DIR=$PWD/tv_FM/templates FLEXJIT_CACHE_DIR=/tmp/fczc
JUMP="score + float(kv_idx / 64) * 150.0 - float(q_idx % 5) * float(kv_idx) * 0.02"
io() { echo --q /tmp/zin/q_$1.npy --k /tmp/zin/k_$1.npy --v /tmp/zin/v_$1.npy --do /tmp/zin/do_$1.npy; }
run_case() { n=$1 d=$2; shift 2; ./flexjit run $(io $d) "$@" --check --out /tmp/zout_$n > $r/check_$n.txt 2>&1
  echo "check $n rc=$? $(tail -6 $r/check_$n.txt | tr '\n' ' ')"; }
(run_case c64 64 --score "$JUMP" --mask "q_idx + 568 >= kv_idx"
 run_case s64 64 --score "30.0 * tanh(score / 30.0)"
 run_case n64 64
 run_case c128 128 --score "$JUMP" --mask "q_idx + 568 >= kv_idx"
 run_case s128 128 --score "30.0 * tanh(score / 30.0)" --mask "q_idx + 568 >= kv_idx"
 run_case n128 128
 run_case c256 256 --score "$JUMP" --mask "q_idx + 568 >= kv_idx") | tee $r/check.txt
save
san() { n=$1 d=$2 tool=$3; shift 3
  timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 --kernel-name kns=attention_bwd_dkdv \
    ./flexjit run $(io $d) "$@" --out /tmp/zsan_${n}_$tool > $r/san_${n}_$tool.txt 2>&1
  echo "san $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
for tool in memcheck racecheck synccheck; do
  (san c64 64 $tool --mask "q_idx + 568 >= kv_idx"; san n128 128 $tool; san c128 128 $tool --mask "q_idx + 568 >= kv_idx"
   san c256 256 $tool --mask "q_idx + 568 >= kv_idx") > $r/san_$tool.txt &
done
wait; cat $r/san_memcheck.txt $r/san_racecheck.txt $r/san_synccheck.txt
save
# 3. If the call has time left: the deterministic mode (arm M changes its dSᵀ stores), main / FM,
#    rounds alternating, on the dense rows of the suite.
unset FLEXJIT_TEMPLATE_DIR FLEXJIT_CACHE_DIR
left=$(( ${DET_UNTIL:-520} - ($(date +%s) - t0) ))
if [ $left -gt 90 ]; then
  python3 - <<'PY'
import json
s = json.load(open("suite.json"))
rows = s["problems"] if isinstance(s, dict) else s
keep = [p for p in rows if p["name"] in ("noop_d128", "causal_d128", "noop_d64", "causal_d64")]
if isinstance(s, dict): s["problems"] = keep
json.dump(s if isinstance(s, dict) else keep, open("dense4.json", "w"))
PY
  bash ab2.sh zd dense4.json bwd_ms $(( left - 60 )) 3 "--bwd-mode deterministic" main:./flexjit: \
    FM:./flexjit:$PWD/tv_FM/templates 2>&1 | grep -v "^zd "
  cp /tmp/zdr/r/ab.txt $r/ab_det.txt 2>/dev/null
fi
echo "done $(( $(date +%s) - t0 )) s"; save
