#!/bin/bash
# (zzzg) prepared for the next session, one call (carry .gpu/zzzf from prepare.sh; about 480 s):
#  1. the GPU tests of branch bwd-score-diagonals-zzzf ((zzzf)'s run_zzzf_next.sh, timeouts cut
#     to 220 s) beside the forward tests of branch fwd-diagonals-staged-under-s (g2, which holds
#     g = fwd-diagonals-with-mask-columns), records saved every 20 s;
#  2. the forward A/B main / zzzf / g / g2 on (zzzd)'s diagonal tables and the documents +
#     diagonal tables, three rounds alternating (no round starts after 200 s).
# Then, in a second call if there is device time: `BIN=./flexjit bash run_zzzf_c.sh` (the peers).
set -u
cd "$(dirname "$0")"
t0=$(date +%s)
out=${OUT:-/tmp/zzzg3}; mkdir -p $out /tmp/zzzfnr/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
(while sleep 20; do (cd /tmp/zzzfnr && tar czf $out/zzzg_tests.tar.gz r 2>/dev/null); done) &
saver=$!
(FLEXJIT_CACHE_DIR=/tmp/fcg_e timeout 220 ./gta_g2 --gtest_filter='FwdGpu.ScoreDiagonalValues*:FwdGpu.MaskColumnValues*:FwdGpu.ScoreColumnValues*:SeqLensGpu.ScoreDiagonalValuesOfShortSequences' > /tmp/zzzfnr/r/tests_g2.txt 2>&1
 echo "tests_g2 rc=$? $(( $(date +%s) - t0 )) s" >> /tmp/zzzfnr/r/rc.txt) &
tests_g2=$!
sed 's/timeout 260 /timeout 220 /' run_zzzf_next.sh > next_g.sh
OUT=$out bash ./next_g.sh
wait $tests_g2
kill $saver 2>/dev/null
echo "g2:"; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" /tmp/zzzfnr/r/tests_g2.txt | sort | uniq -c
cat /tmp/zzzfnr/r/rc.txt
(cd /tmp/zzzfnr && tar czf $out/zzzg_tests.tar.gz r)
echo "tests done $(( $(date +%s) - t0 )) s"
python3 - <<'PY'
import json
probs = json.load(open("diagonal_tables.json"))["problems"] + json.load(open("document_diagonal_tables.json"))["problems"]
json.dump({"problems": probs}, open("ab_fwd_tables.json", "w"))
PY
OUT=$out bash ab2.sh zg ab_fwd_tables.json fwd_ms 200 3 "--no-bwd" main:./flexjit_main: zzzf:./flexjit: g:./flexjit_g: g2:./flexjit_g2: 2>&1 | grep -v "^zg "
echo "all done $(( $(date +%s) - t0 )) s"
