#!/bin/bash
# (zzzj) call 3 (carry .gpu/zzzk3; about 330 s): the table form on three consumer warpgroups at
# d64 (m192n128 / m192n64, the build that opens the overlap to them) against the landed default
# (m128n128, commit 499ab4d), 3 alternating rounds; then ncu of T5 d64 on the landed default.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzk3}; r=/tmp/zzzk3r; mkdir -p $out $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
OUT=$out bash ab2.sh m192 table_d64.json fwd_ms 200 3 "--no-bwd" t128:./flexjit_t:: m192:./flexjit_m::--config=m192n128w12s2ws m192n64:./flexjit_m::--config=m192n64w12s2ws 2>&1 | grep -v "^m192 "
prob=t5_bucket_d64
FLEXJIT_CACHE_DIR=/tmp/fjn timeout 100 /usr/local/cuda/bin/ncu --set full --import-source yes -k regex:attention_fwd -c 1 -f \
  -o $r/$prob ./flexjit_t bench --suite table_d64.json --only $prob --no-bwd > $r/$prob.log 2>&1
/usr/local/cuda/bin/ncu --import $r/$prob.ncu-rep --page details > $r/$prob.txt 2>&1
/usr/local/cuda/bin/ncu --import $r/$prob.ncu-rep --page source --csv --print-source sass > $r/$prob.sass.csv 2>&1
echo "ncu $prob $(( $(date +%s) - t0 )) s $(grep -h 'Duration' $r/$prob.txt | head -1)"
(cd /tmp && tar czf $out/ncuk.tar.gz --exclude='*.ncu-rep' zzzk3r)
echo "all done $(( $(date +%s) - t0 )) s"
