#!/bin/bash
# zzn4: the landing form (C without B's one-buffer wait, which deadlocked B: a parity wait cannot
# tell phase u - 2 from phase u): every BwdGpu/DqByTurnsOverTheTensorsColumns case, the two
# three-stage ones (one staging buffer taken by turns) also under the sanitizers, then the
# three-stage kernels on bwd_hd.json's d72-d96 rows, each round bounded (a hang runs out its time).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzn4}; r=/tmp/zzn4r/r; mkdir -p $r $out
save() { (cd /tmp/zzn4r && tar czf $out/zzn4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
( FLEXJIT_CACHE_DIR=/tmp/fct timeout 200 ./gpu_test_attentionC --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*' > $r/tests.txt 2>&1
  echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -c 'OK \]' $r/tests.txt) ok $(grep -c 'FAILED \]' $r/tests.txt) failed" >> $r/rc.txt ) &
s() {  # s TOOL CASE
  FLEXJIT_CACHE_DIR=/tmp/fc_$1_$2 timeout 300 compute-sanitizer --tool $1 --kernel-name kns=attention_bwd_dkdv ./gpu_test_attentionC --gtest_filter="BwdGpu/DqByTurnsOverTheTensorsColumns.Case/$2" > $r/$1_$2.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - t0 )) s $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $r/$1_$2.txt) $(grep -c 'OK \]' $r/$1_$2.txt) ok; not the statistics copy: $(grep 'Error: Race' $r/$1_$2.txt | grep -vc bulk_load)" >> $r/rc.txt; }
for i in 6 7; do s memcheck $i & s synccheck $i & s racecheck $i & done
wait; sort $r/rc.txt; grep -E "FAILED|Failure" $r/tests.txt | head; save
export FLEXJIT_AUTOTUNE=off
for n in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fs timeout 60 ./flexjitC bench --suite bwd_hd.json --dkdv-config m64n128w8s3ws --only noop_d80,causal_d80,noop_d96,causal_d96,causal_d72,gqa_causal_d96,phi3_d96_causal_s2048 --json $r/s3_$n.jsonl > $r/s3_$n.log 2>&1
  echo "s3 round $n rc=$? $(grep -c bwd_ms $r/s3_$n.jsonl) problems $(( $(date +%s) - t0 )) s" | tee -a $r/rc.txt; save
done
