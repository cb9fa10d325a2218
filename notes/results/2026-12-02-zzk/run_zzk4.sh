#!/bin/bash
# zzk4: main at 5e9e37d (trim + uneven head splits) beside cuDNN and FA2 (SDPA) in one call:
# flexjit's default forward and fast backward, its deterministic backward, then the peers, then
# flexjit's fast arm again.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzk4}; r=/tmp/zzk4r/r; mkdir -p $r $out
save() { (cd /tmp/zzk4r && tar czf $out/zzk4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc4
t0=$(date +%s)
timeout 60 ./flexjit bench --suite zzk4.json --json $r/fj_1.jsonl > $r/fj_1.log 2>&1; echo "fj1 $? $(( $(date +%s) - t0 )) s"; save
timeout 30 ./flexjit bench --suite zzk4.json --bwd-mode deterministic --json $r/fj_det.jsonl > $r/fj_det.log 2>&1; echo "det $? $(( $(date +%s) - t0 )) s"; save
timeout 80 python3 offsuite_peers.py --suite zzk4.json --no-flex > $r/peers.jsonl 2> $r/peers.err; echo "peers $? $(( $(date +%s) - t0 )) s"; save
timeout 30 ./flexjit bench --suite zzk4.json --json $r/fj_2.jsonl > $r/fj_2.log 2>&1; echo "fj2 $? $(( $(date +%s) - t0 )) s"; save
python3 ratios_by_time.py $r/fj_1.jsonl $r/fj_2.jsonl --peers $r/peers.jsonl > $r/ratios.txt 2>&1; python3 ratios_by_time.py $r/fj_det.jsonl --peers $r/peers.jsonl > $r/ratios_det.txt 2>&1; cat $r/ratios.txt; tail -n +2 $r/ratios_det.txt | cut -c1-60,100-; save
