#!/bin/bash
# zzn1: dQ by turns at head dims 72 to 96, kept in their tile (C = main + zzm_dq_turns_in_tile.patch):
# its GPU tests and the d72-d96 backward tests against the float64 reference, racecheck on one CTA
# and on many (C's d80 kernels, noop and causal; main's d64 causal kernel, whose turns go a tile
# late through two buffers, as a control for the epilogue pairs zzm3 saw), then C's fast backward
# on bwd_hd.json four times, each round bounded (a hang shows as a round that runs out its time).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzn1}; r=/tmp/zzn1r/r; mkdir -p $r $out
save() { (cd /tmp/zzn1r && tar czf $out/zzn1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $r/gpu.txt 2>&1
mk() {  # mk DIR B H SQ SKV D
  mkdir -p $1 && python3 -c "
import numpy as np, sys
b, h, sq, skv, d = map(int, sys.argv[2:])
g = np.random.default_rng()
for n, s in (('q', sq), ('do', sq)): np.save(f'{sys.argv[1]}/{n}.npy', g.standard_normal((b, h, s, d)).astype(np.float32))
for n in ('k', 'v'): np.save(f'{sys.argv[1]}/{n}.npy', g.standard_normal((b, h, skv, d)).astype(np.float32))
" $1 $2 $3 $4 $5 $6; }
mk /tmp/one80 1 1 333 100 80; mk /tmp/many80 2 4 333 517 80; mk /tmp/many64 2 4 517 333 64
rc() {  # rc NAME BINARY INPUTS [flexjit run args]
  n=$1; b=$2; i=$3; shift 3
  FLEXJIT_CACHE_DIR=/tmp/fc_$n timeout 380 compute-sanitizer --tool racecheck ./$b run --q $i/q.npy --k $i/k.npy --v $i/v.npy --do $i/do.npy --out /tmp/o_$n "$@" > $r/race_$n.txt 2>&1
  echo "race $n rc=$? $(( $(date +%s) - t0 )) s $(grep 'RACECHECK SUMMARY' $r/race_$n.txt) not the statistics copy: $(grep 'Error: Race' $r/race_$n.txt | grep -vc bulk_load)" >> $r/rc.txt; }
rc one80C flexjitC /tmp/one80 & rc many80C flexjitC /tmp/many80 &
rc many80Ccausal flexjitC /tmp/many80 --mask 'q_idx >= kv_idx' & rc many64Acausal flexjitA /tmp/many64 --mask 'q_idx >= kv_idx' &
( FLEXJIT_CACHE_DIR=/tmp/fct1 timeout 300 ./gpu_test_attentionC --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*:BwdGpu/GradientGemmsSpanOnlyTheTensorsColumns.*:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.HeadDimsThatAreNoMultipleOf64' > $r/tests1.txt 2>&1
  echo "tests1 rc=$? $(( $(date +%s) - t0 )) s $(grep -c 'OK \]' $r/tests1.txt) ok $(grep -c 'FAILED \]' $r/tests1.txt) failed" >> $r/rc.txt ) &
( FLEXJIT_CACHE_DIR=/tmp/fct2 FLEXJIT_RANDOM_PROBLEMS=12 timeout 300 ./gpu_test_attentionC --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward:SeqLensGpu.HeadDimsThatAreNoMultipleOf64' > $r/tests2.txt 2>&1
  echo "tests2 rc=$? $(( $(date +%s) - t0 )) s $(grep -c 'OK \]' $r/tests2.txt) ok $(grep -c 'FAILED \]' $r/tests2.txt) failed" >> $r/rc.txt ) &
wait; cat $r/rc.txt; save
export FLEXJIT_AUTOTUNE=off
for n in 1 2 3 4; do
  [ $(( $(date +%s) - t0 )) -gt 530 ] && break
  FLEXJIT_CACHE_DIR=/tmp/fsC timeout 45 ./flexjitC bench --suite bwd_hd.json --json $r/stressC_$n.jsonl > $r/stressC_$n.log 2>&1
  echo "stress C $n rc=$? $(grep -c bwd_ms $r/stressC_$n.jsonl) problems $(( $(date +%s) - t0 )) s" | tee -a $r/rc.txt; save
done
grep -E "FAILED|Failure" $r/tests*.txt | head -20
