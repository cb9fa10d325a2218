#!/bin/bash
# (zzzi) call 1 (carry .gpu/zzzi; about 500 s): the bias form (branch fwd-diagonal-bias:
# flexjit_bias, gta_bias) against main (flexjit_main):
#  1. `run --check` against float64: odd lengths, GQA 3:1, Sq != Skv, documents, T5, d64 and d128;
#  2. compute-sanitizer memcheck on the bias form beside documents, d64 and d128;
#  3. the forward A/B on the diagonal tables (3 rounds) and two plain suite rows (2 rounds);
#  4. the forward diagonal GPU tests (4 shards) with the new FwdGpu.DiagonalBiasStandInsAndScales.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzi}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(23)
for d in (64, 128):
    for n, h, s in (("q", 6, 333), ("k", 2, 517), ("v", 2, 517)):
        np.save(f"/tmp/p{n}{d}.npy", rng.standard_normal((2, h, s, d)).astype(np.float32))
np.save("/tmp/prelh.npy", rng.standard_normal((6, 1024)).astype(np.float32))
np.save("/tmp/pt5.npy", rng.standard_normal((6, 32)).astype(np.float32))
np.save("/tmp/pdoc.npy", np.repeat(np.arange(5), [70, 1, 130, 99, 217]).astype(np.int32))
PY
R="score + relh[h][kv_idx - q_idx + 400]"
T5="score + t5[h][where(kv_idx - q_idx > 0, 16, 0) + where(abs(kv_idx - q_idx) < 8, abs(kv_idx - q_idx), min(15, 8 + int(log(float(abs(kv_idx - q_idx)) / 8.0) / log(16.0) * 8.0)))]"
i=0
for d in 64 128; do for c in "relh causal|$R|q_idx >= kv_idx" "relh|$R|" "t5|$T5|" "relh docs|$R|doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx"; do
  IFS='|' read name S M <<< "$c"; i=$((i+1))
  (margs=(); [ -n "$M" ] && margs=(--mask "$M")
   FLEXJIT_CACHE_DIR=/tmp/fpc_$i timeout 120 ./flexjit_bias run --q /tmp/pq$d.npy --k /tmp/pk$d.npy --v /tmp/pv$d.npy \
     --buffer relh=/tmp/prelh.npy --buffer t5=/tmp/pt5.npy --buffer doc=/tmp/pdoc.npy --score "$S" "${margs[@]}" --check --out /tmp/pco$i > $out/check_$i.txt 2>&1
   echo "check d$d $name rc=$? $(grep -h 'relative error' $out/check_$i.txt | tr '\n' ' ')") &
done; done; wait
for d in 64 128; do
FLEXJIT_CACHE_DIR=/tmp/fcs_$d timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --kernel-name kns=attention_ \
  ./flexjit_bias run --q /tmp/pq$d.npy --k /tmp/pk$d.npy --v /tmp/pv$d.npy --buffer relh=/tmp/prelh.npy --buffer doc=/tmp/pdoc.npy \
  --score "$R" --mask "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx" --check --out /tmp/pcs$d > $out/san_d$d.txt 2>&1
echo "memcheck d$d relh docs rc=$? $(grep -h 'ERROR SUMMARY\|relative error' $out/san_d$d.txt | tr '\n' ' ')"
done
echo "checks done $(( $(date +%s) - t0 )) s"
OUT=$out bash ab2.sh bias bias_tables.json fwd_ms 150 3 "--no-bwd" main:./flexjit_main: bias:./flexjit_bias: 2>&1 | grep -v "^bias "
OUT=$out bash ab2.sh plain plain_rows.json fwd_ms 40 2 "--no-bwd" main:./flexjit_main: bias:./flexjit_bias: 2>&1 | grep -v "^plain "
echo "ab done $(( $(date +%s) - t0 )) s"
for s in 0 1 2 3; do (GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s FLEXJIT_CACHE_DIR=/tmp/fbt$s timeout ${TEST_S:-280} ./gta_bias \
  --gtest_filter='FwdGpu.ScoreDiagonalValues*:FwdGpu.DiagonalBias*:SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > $out/tests_$s.txt 2>&1; echo "shard $s rc=$?") & done; wait
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests_*.txt | head -40
echo "all done $(( $(date +%s) - t0 )) s"
