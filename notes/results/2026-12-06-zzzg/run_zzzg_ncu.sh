#!/bin/bash
# (zzzg) prepared, for a call after run_zzzg_3.sh (carry .gpu/zzzf from prepare.sh plus
# ../2026-12-05-zzze/diagonal_tables_bwd.json copied into it; about 120 s): ncu of the per-head
# relative table's causal d64 fast dK/dV kernel on main and on zzzf's branch, the one row the
# branch lost ((zzzf): 0.983, 0/4 rounds), for where the branch's time goes (its staging's loads
# and barrier against main's per-score loads).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzgn}; r=/tmp/zzzgnr; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for a in main:./flexjit_main zzzf:./flexjit; do n=${a%%:*}; b=${a#*:}
  FLEXJIT_CACHE_DIR=/tmp/fcn_$n timeout 100 /usr/local/cuda/bin/ncu --set full --import-source yes -k regex:dkdv -c 1 -f \
    -o $r/ncu_$n $b bench --suite diagonal_tables_bwd.json --only relbias_head_causal_d64 > $r/ncu_$n.log 2>&1
  echo "ncu $n rc=$? $(( $(date +%s) - t0 )) s"
  /usr/local/cuda/bin/ncu --import $r/ncu_$n.ncu-rep --page details > $r/ncu_$n.txt 2>&1
done
grep -hE "Duration|Elapsed Cycles|Registers Per|Compute \(SM\) Throughput|Issue Slots Busy|L1/TEX Hit|No Eligible" $r/ncu_*.txt
(cd /tmp && tar czf $out/zzzgn.tar.gz zzzgnr)
