#!/bin/bash
# (zzzh) prepared for the next session, one call (carry .gpu/zzzh; about 420 s):
#  1. ncu of the forward on main: noop d128 / T5 d128, causal d64 / relative table causal d64
#     (ncu_diag.sh: details, raw metrics and per-SASS stall samples);
#  2. arm RA128 (branch fwd-diagonals-read-ahead-d128: the diagonal values read a tile ahead at
#     d128 too, as templates in tmpl_ra run by main's binary) against main on the d128 diagonal
#     tables, three rounds;
#  3. the forward diagonal GPU tests under tmpl_ra (4 shards), to land it if it wins.
set -u
cd "$(dirname "$0")"
t0=$(date +%s)
out=${OUT:-/tmp/zzzhn}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
OUT=$out bash ncu_diag.sh 2>&1 | tail -24
echo "ncu done $(( $(date +%s) - t0 )) s"
OUT=$out bash ab2.sh ra ra128_tables.json fwd_ms 150 3 "--no-bwd" main:./flexjit_main: ra:./flexjit_main:$PWD/tmpl_ra 2>&1 | grep -v "^ra "
echo "ab done $(( $(date +%s) - t0 )) s"
for s in 0 1 2 3; do (GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_ra FLEXJIT_CACHE_DIR=/tmp/fra$s \
  timeout ${TEST_S:-200} ./gta_main --gtest_filter='FwdGpu.ScoreDiagonalValues*:SeqLensGpu.ScoreDiagonalValuesOfShortSequences' \
  > $out/tests_ra_$s.txt 2>&1; echo "shard $s rc=$?") & done; wait
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests_ra_*.txt
echo "all done $(( $(date +%s) - t0 )) s"
