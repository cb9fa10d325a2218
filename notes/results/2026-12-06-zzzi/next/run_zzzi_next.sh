#!/bin/bash
# (zzzi) prepared for the next session, one call (carry .gpu/zzzj; about 400 s):
#  1. the GPU test the landed bias form has not run (SeqLensGpu.ScoreDiagonalValuesOfShortSequences)
#     and its own (FwdGpu.DiagonalBias*), on main;
#  2. ncu of the forward at d64: noop d64 against T5 d64 and the per-head table d64 (bias form),
#     details and per-SASS samples, for why the diagonal tables run at 0.62x noop there;
#  3. T5 d64 / relh d64 over the two-warpgroup configs (bench --config, 2 rounds): whether
#     64-key tiles (m128n64w8s2ws) beat the default m128n128w8s2ws with the bias form.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzj}; r=/tmp/zzzjr; mkdir -p $out $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/fj1 timeout 150 ./gta --gtest_filter='SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > $out/tests_seqlens.txt 2>&1; echo "seqlens rc=$?") &
(FLEXJIT_CACHE_DIR=/tmp/fj2 timeout 150 ./gta --gtest_filter='FwdGpu.DiagonalBias*' > $out/tests_bias.txt 2>&1; echo "bias rc=$?") &
wait
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests_*.txt | head
echo "tests $(( $(date +%s) - t0 )) s"
python3 - <<'PY'
import json
rows = json.load(open("suite.json"))["problems"] + json.load(open("d64_tables.json"))["problems"]
json.dump({"problems": rows}, open("all.json", "w"))
PY
for prob in noop_d64 t5_bucket_d64 relbias_head_d64; do
  FLEXJIT_CACHE_DIR=/tmp/fjn timeout 100 /usr/local/cuda/bin/ncu --set full --import-source yes -k regex:attention_fwd -c 1 -f \
    -o $r/$prob ./flexjit bench --suite all.json --only $prob --no-bwd > $r/$prob.log 2>&1
  /usr/local/cuda/bin/ncu --import $r/$prob.ncu-rep --page details > $r/$prob.txt 2>&1
  /usr/local/cuda/bin/ncu --import $r/$prob.ncu-rep --page source --csv --print-source sass > $r/$prob.sass.csv 2>&1
  echo "ncu $prob $(( $(date +%s) - t0 )) s $(grep -h 'Duration' $r/$prob.txt | head -1)"
done
(cd /tmp && tar czf $out/ncuj.tar.gz --exclude='*.ncu-rep' zzzjr)
OUT=$out bash ab2.sh cfg d64_tables.json fwd_ms 120 2 "--no-bwd" n128:./flexjit::--config=m128n128w8s2ws n64:./flexjit::--config=m128n64w8s2ws 2>&1 | grep -v "^cfg "
echo "all done $(( $(date +%s) - t0 )) s"
