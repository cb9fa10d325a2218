#!/bin/bash
# (zzzi) call 2 (carry .gpu/zzzi; about 450 s): the bias form with 2^126 stand-ins and without
# documents (flexjit_bias, gta_bias): its GPU tests, the forward A/B against main on the tables
# without documents (3 rounds), then flexjit_bias beside the peers (FlexAttention, SDPA's cuDNN
# with the materialised bias, FA2) on those tables and noop d128 (run_zzzd_d.sh's table).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzi2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
OUT=$out bash ab2.sh bias2 bias2_tables.json fwd_ms 150 3 "--no-bwd" main:./flexjit_main: bias:./flexjit_bias: 2>&1 | grep -v "^bias2 "
echo "ab done $(( $(date +%s) - t0 )) s"
for s in 0 1 2 3; do (GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$s FLEXJIT_CACHE_DIR=/tmp/fbt$s timeout 200 ./gta_bias \
  --gtest_filter='FwdGpu.ScoreDiagonalValues*:FwdGpu.DiagonalBias*:SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > /tmp/tests2_$s.txt 2>&1; echo "shard $s rc=$?") & done
wait
cat /tmp/tests2_*.txt > $out/tests2.txt
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests2.txt | head -30
grep -h -A3 "Failure" $out/tests2.txt | head -30
echo "tests done $(( $(date +%s) - t0 )) s"
w=/tmp/zzzi2_w; rm -rf $w; mkdir -p $w; cp run_zzzd_d.sh peers.py $w/ && cp peer_suite.json $w/suite.json && cp flexjit_bias $w/flexjit
OUT=$out bash $w/run_zzzd_d.sh
echo "all done $(( $(date +%s) - t0 )) s"
