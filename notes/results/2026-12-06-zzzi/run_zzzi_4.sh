#!/bin/bash
# (zzzi) call 4 (carry .gpu/zzzi; about 280 s): the landing candidate (saturating bias form, its
# stand-in rows reported): GPU tests (diagonal values, out of bounds, beside mask columns, short
# sequences, stand-ins and scales), `run --check` + memcheck, and the forward A/B against main
# on the tables without documents (2 rounds).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzi4}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
OUT=$out bash ab2.sh bias4 bias2_tables.json fwd_ms 80 2 "--no-bwd" main:./flexjit_main: bias:./flexjit_bias: 2>&1 | grep -v "^bias4 "
echo "ab done $(( $(date +%s) - t0 )) s"
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(29)
for d in (64, 128):
    for n, h, s in (("q", 6, 333), ("k", 2, 517), ("v", 2, 517)):
        np.save(f"/tmp/p{n}{d}.npy", rng.standard_normal((2, h, s, d)).astype(np.float32))
np.save("/tmp/prelh.npy", rng.standard_normal((6, 1024)).astype(np.float32))
PY
for d in 64 128; do
FLEXJIT_CACHE_DIR=/tmp/fcs4_$d timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --kernel-name kns=attention_ \
  ./flexjit_bias run --q /tmp/pq$d.npy --k /tmp/pk$d.npy --v /tmp/pv$d.npy --buffer relh=/tmp/prelh.npy \
  --score "score + relh[h][kv_idx - q_idx + 400]" --mask "q_idx >= kv_idx" --check --out /tmp/pcs4$d > $out/san4_d$d.txt 2>&1
echo "memcheck d$d relh causal rc=$? $(grep -h 'ERROR SUMMARY\|relative error' $out/san4_d$d.txt | tr '\n' ' ')"
done
for s in 0 1 2 3; do (GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s FLEXJIT_CACHE_DIR=/tmp/f4t$s timeout 230 ./gta_bias \
  --gtest_filter='FwdGpu.ScoreDiagonalValues*:FwdGpu.DiagonalBias*:SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > /tmp/tests4_$s.txt 2>&1; echo "shard $s rc=$?") & done
wait
cat /tmp/tests4_*.txt > $out/tests4.txt
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests4.txt | head -20
grep -h -A3 "Failure" $out/tests4.txt | head -20
echo "all done $(( $(date +%s) - t0 )) s"
