#!/bin/bash
# (zzzb) One call (carry .gpu/zzza; about 560 s) for arm FM (the branch bwd-late-dq-fence) where the
# session's device time allows one call only: its backward GPU tests in seven processes (as
# run_zzza_a.sh's a-g), racecheck and synccheck on a d64 and a d128 backward, then the fast
# backward's A/B main / FM over the suite in the time left (ab2.sh, bwd_ms, rounds alternating).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzbf}; r=/tmp/zzzbfr/r; mkdir -p $r $out
save() { (cd /tmp/zzzbfr && tar czf $out/zzzbf.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 200 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.WarpSpecializedFastDkdv' &
go b 'BwdGpu.SuiteMods:BwdGpu.QueryTilesPastTheQueriesEndAreLeftOut:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches' &
go c 'BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsThatAreNoMultipleOf64' &
go d 'BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128:BwdGpu.OddLengthsAndDifferentLengths' &
go e '*GradientGemmsSpanOnlyTheTensorsColumns*:*DqByTurnsOverTheTensorsColumns*:BwdGpu.HopperWgmmaPath:BwdGpu.FastModeOnePerHeadDim:BwdGpu.Gqa8To1AndBshd' &
go f 'SeqLensGpu.*Backward*:SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages:RandomProblemsGpu.*' &
go g 'BwdGpu.OrderedModeLongDocuments:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeSplitsGqaGroupsOverCtas:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.FullyMaskedRowsGiveZeroGradients:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt' &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
save
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for d in (64, 128):
    np.save(f"/tmp/zin/q_{d}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{d}.npy", rng.standard_normal((1, 2, 901, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{d}.npy", rng.standard_normal((1, 2, 901, d)).astype(np.float32))
    np.save(f"/tmp/zin/do_{d}.npy", rng.standard_normal((1, 4, 333, d)).astype(np.float32))
PY
io() { echo --q /tmp/zin/q_$1.npy --k /tmp/zin/k_$1.npy --v /tmp/zin/v_$1.npy --do /tmp/zin/do_$1.npy; }
san() { n=$1 d=$2 tool=$3; shift 3
  FLEXJIT_TEMPLATE_DIR=$PWD/tv_FM/templates FLEXJIT_CACHE_DIR=/tmp/fcs_$tool timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool $tool \
    --print-limit 20 --kernel-name kns=attention_bwd_dkdv ./flexjit run $(io $d) "$@" --out /tmp/zsan_${n}_$tool > $r/san_${n}_$tool.txt 2>&1
  echo "san $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
for tool in racecheck synccheck; do
  (san c64 64 $tool --mask "q_idx + 568 >= kv_idx"; san c128 128 $tool --mask "q_idx + 568 >= kv_idx") > $r/san_$tool.txt &
done
wait; cat $r/san_racecheck.txt $r/san_synccheck.txt
save
left=$(( ${UNTIL:-540} - ($(date +%s) - t0) ))
[ $left -gt 120 ] && bash ab2.sh zf suite.json bwd_ms $(( left - 110 )) 4 "" main:./flexjit: \
  FM:./flexjit:$PWD/tv_FM/templates 2>&1 | grep -v "^zf "
cp /tmp/zfr/r/ab.txt $r/ab.txt 2>/dev/null
echo "done $(( $(date +%s) - t0 )) s"; save
