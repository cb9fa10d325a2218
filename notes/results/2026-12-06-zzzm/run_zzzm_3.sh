#!/usr/bin/env bash
# (zzzm) call 3 (carry .gpu/zzzm3): what call 2's 150 s test limit cut (seed-lead's backward
# diagonal-table tests, three processes side by side), three more A/B rounds main / seed-lead on
# the seeded d64 rows, then ncu source counters of main's dK/dV kernel on noop d128 and long
# causal d128 (call 2: long causal executes 20 % more instructions per tile: which).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzm3}; r=/tmp/zzzm3r/r; mkdir -p $r $out
save() { (cd /tmp/zzzm3r && tar czf $out/zzzm3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
i=0
for f in 'BwdGpu.ScoreDiagonalValues' 'BwdGpu.DiagonalTable*:BwdGpu.ScoreDiagonalSeed*:BwdGpu.ScoreDiagonalValuesOutOfBounds' 'SeqLensGpu.ScoreDiagonal*'; do
  i=$((i + 1))
  (FLEXJIT_CACHE_DIR=/tmp/fj_t$i timeout 280 ./gta --gtest_filter="$f" > $r/tests_$i.txt 2>&1; echo "tests $i rc=$? $(( $(date +%s) - t0 )) s") &
done
wait
grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST" $r/tests_*.txt | head -30
save
OUT=$r bash ab2.sh seedab seed_d64.json bwd_ms 100 3 "" lead:./flexjit:: main:./flexjit_main:: 2>&1 | grep -v "^seedab "
echo "A/B $(( $(date +%s) - t0 )) s"
save
for p in noop_d128 long_causal_d128; do
  left=$(( 540 - ($(date +%s) - t0) )); [ $left -lt 30 ] && break
  FLEXJIT_CACHE_DIR=/tmp/fcn timeout $left ncu --kernel-name flexjit_attention_bwd_dkdv --launch-skip 3 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --import-source no -o $r/src_$p ./flexjit_main bench --suite suite.json --only $p > $r/ncu_$p.log 2>&1
  echo "ncu $p rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/src_$p.ncu-rep --page source --csv --print-source sass > $r/src_$p.csv 2>&1
  rm -f $r/src_$p.ncu-rep
  save
done
echo "all $(( $(date +%s) - t0 )) s"
save
