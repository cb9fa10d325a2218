#!/bin/bash
# (zzzi) call 3 (carry .gpu/zzzi; about 250 s): the exact bias form (tmpl_exact: a tile whose
# staging flags an error or a value past 2^126 falls back to the per-score mods, the work tile's
# scores in base 2 from there; ptxas spills 48-96 bytes at d128) against the saturating one
# (flexjit_bias's own templates) and main: the forward A/B on the tables without documents
# (3 rounds), then the stand-in / scale test and the diagonal tests under tmpl_exact.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzi3}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
OUT=$out bash ab2.sh bias3 bias2_tables.json fwd_ms 160 3 "--no-bwd" main:./flexjit_main: sat:./flexjit_bias: exact:./flexjit_bias:$PWD/tmpl_exact 2>&1 | grep -v "^bias3 "
echo "ab done $(( $(date +%s) - t0 )) s"
for s in 0 1 2 3; do (GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_exact FLEXJIT_CACHE_DIR=/tmp/fxt$s timeout 200 ./gta_bias \
  --gtest_filter='FwdGpu.DiagonalBias*:FwdGpu.ScoreDiagonalValues:FwdGpu.ScoreDiagonalValuesOutOfBounds' > /tmp/tests3_$s.txt 2>&1; echo "shard $s rc=$?") & done
wait
cat /tmp/tests3_*.txt > $out/tests3.txt
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests3.txt | head -20
grep -h -A3 "Failure" $out/tests3.txt | head -20
echo "all done $(( $(date +%s) - t0 )) s"
