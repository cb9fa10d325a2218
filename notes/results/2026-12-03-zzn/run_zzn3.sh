#!/bin/bash
# zzn3: compute-sanitizer (memcheck, synccheck, racecheck) on every case of C's
# BwdGpu/DqByTurnsOverTheTensorsColumns (main + zzm_dq_turns_in_tile.patch), one process per case and tool.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzn3}; r=/tmp/zzn3r/r; mkdir -p $r $out
save() { (cd /tmp/zzn3r && tar czf $out/zzn3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
s() {  # s TOOL CASE
  FLEXJIT_CACHE_DIR=/tmp/fc_$1_$2 timeout 480 compute-sanitizer --tool $1 --kernel-name kns=attention_bwd_dkdv ./gpu_test_attentionC --gtest_filter="BwdGpu/DqByTurnsOverTheTensorsColumns.Case/$2" > $r/$1_$2.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - t0 )) s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/$1_$2.txt) $(grep -c 'OK \]' $r/$1_$2.txt) ok; not the statistics copy: $(grep 'Error: Race' $r/$1_$2.txt | grep -vc bulk_load)" >> $r/rc.txt; }
for i in 0 1 2 3 4 5 6; do s memcheck $i & s synccheck $i & done
for i in 0 2 3 5; do s racecheck $i & done
wait; sort $r/rc.txt; save
