#!/bin/bash
# For a session with a GPU: what zzm_dq_turns.patch (dQ by turns at head dims 72 to 96) owes before
# it can land. zzm3 measured its first form (H200: causal d80 1.10x, causal d72 1.09x, GQA causal
# d96 1.07x, Phi-3 1.06x, causal d96 1.04x, noop d80 1.02x, noop d96 1.01x; ViT-H d80 S=257 0.97x
# in one round) and its GPU tests passed (memcheck and synccheck clean), but that form had a race:
# with the dQ a tile late there is one staging buffer (the third dSᵀ tile leaves no room for a
# second), the warpgroups take it by turns, and a turn's wait on the buffer's empty barrier (the
# parity of phase u - 1) passed at once while phase u - 2 was still open, so share u could
# overwrite share u - 2 before the writer read it. zzm3 saw it as a hang of the fast backward
# (B's second round stopped at GQA 4:1 causal d96 and ran out its 100 s) and as racecheck write
# pairs on the buffer. The patch now waits for phase u - 2 first (stage_dq); that form is
# CPU-checked only. This run:
#   1. (tests) the GPU tests of the turns (BwdGpu/DqByTurnsOverTheTensorsColumns, its last case
#      one CTA) and of the d72-d96 backward, then the fast backward on the suite, four rounds each
#      of B and C, every one bounded: a hang shows as a round that runs out its time;
#   2. (race) racecheck on ONE CTA (B=1, H=1, Skv=100; flexjit run) and on many, of main's d64 kernel (the
#      same turns a tile late, landed in (za), two buffers), main's d80 kernel (columns split) and
#      the patches' d80 kernels: which reports the landed kernels draw too. Cross-warpgroup stores
#      ordered by mbarriers alone draw reports (README: the statistics copy), so the patch's
#      buffer pairs may remain; the read-write pairs in the dK/dV epilogue that zzm3 also showed
#      are unexplained and must be understood first;
#   3. (ab) A against B and C, rounds alternating.
# C is the other form, zzm_dq_turns_in_tile.patch: the same turns kept in their tile at 128-column
# tiles (no deferral, so two dQ staging buffers, one per warpgroup, as d64 has; no spills at
# d88/d96 either). If C is as fast as B, C is the one to land: it has no shared buffer at all.
# Setup: a .gpu/<name> folder with flexjitA (main's build), flexjitB (main + zzm_dq_turns.patch),
# flexjitC (main + zzm_dq_turns_in_tile.patch), gpu_test_attentionB and gpu_test_attentionC (each
# build's tests: the plan is compiled into the library they link), bwd_hd.json and this script;
# carry [".gpu/<name>"]. Three device calls, one a part: `run_next_dq_turns.sh tests`, `... race`,
# `... ab` (each under 600 s).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/next}; r=/tmp/nextr/r; mkdir -p $r $out
save() { (cd /tmp/nextr && tar czf $out/next_dq_turns.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
mk() {  # mk DIR B H SQ SKV D
  mkdir -p $1 && python3 -c "
import numpy as np, sys
b, h, sq, skv, d = map(int, sys.argv[2:])
g = np.random.default_rng()
for n, s in (('q', sq), ('do', sq)): np.save(f'{sys.argv[1]}/{n}.npy', g.standard_normal((b, h, s, d)).astype(np.float32))
for n in ('k', 'v'): np.save(f'{sys.argv[1]}/{n}.npy', g.standard_normal((b, h, skv, d)).astype(np.float32))
" $1 $2 $3 $4 $5 $6; }
part=${1:-tests}
if [ "$part" = tests ]; then
  for x in B C; do
    ( FLEXJIT_CACHE_DIR=/tmp/fct$x timeout 280 ./gpu_test_attention$x --gtest_filter='BwdGpu/DqByTurnsOverTheTensorsColumns.*:BwdGpu/GradientGemmsSpanOnlyTheTensorsColumns.*:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.HeadDimsThatAreNoMultipleOf64' > $r/tests$x.txt 2>&1
      echo "tests$x rc=$? $(grep -c 'OK \]' $r/tests$x.txt) ok $(grep -c 'FAILED \]' $r/tests$x.txt) failed" >> $r/rc.txt ) &
  done; wait; cat $r/rc.txt; save
  for n in 1 2 3 4; do for x in B C; do FLEXJIT_CACHE_DIR=/tmp/fs$x timeout 40 ./flexjit$x bench --suite bwd_hd.json --json $r/stress${x}_$n.jsonl > /dev/null 2>&1; echo "stress $x $n rc=$? $(grep -c bwd_ms $r/stress${x}_$n.jsonl) problems" | tee -a $r/rc.txt; done; done; save
  exit 0
fi
if [ "$part" = race ]; then
mk /tmp/one64 1 1 333 100 64; mk /tmp/one80 1 1 333 100 80; mk /tmp/many64 2 4 333 517 64; mk /tmp/many80 2 4 333 517 80
rc() {  # rc NAME BINARY INPUTS
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 400 compute-sanitizer --tool racecheck ./$2 run --q $3/q.npy --k $3/k.npy --v $3/v.npy --do $3/do.npy --out /tmp/o_$1 > $r/$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s $(grep 'RACECHECK SUMMARY' $r/$1.txt) not the statistics copy: $(grep 'Error: Race' $r/$1.txt | grep -vc bulk_load)" >> $r/rc.txt; }
rc one64A flexjitA /tmp/one64 & rc one80A flexjitA /tmp/one80 & rc one80B flexjitB /tmp/one80 & rc one80C flexjitC /tmp/one80 &
rc many64A flexjitA /tmp/many64 & rc many80A flexjitA /tmp/many80 & rc many80B flexjitB /tmp/many80 & rc many80C flexjitC /tmp/many80 &
wait; sort $r/rc.txt; save
exit 0
fi
for n in 1 2; do for a in A B C; do FLEXJIT_CACHE_DIR=/tmp/fb_$a timeout 60 ./flexjit$a bench --suite bwd_hd.json --json $r/${a}_$n.jsonl > /dev/null 2>&1; done; done
python3 -c "
import sys, json, glob
for f in sorted(glob.glob(sys.argv[1] + '/[ABC]_*.jsonl')):
    for l in open(f):
        if l.startswith('{'): o = json.loads(l); print(o['name'], f.split('/')[-1][0], o['bwd_ms'])" $r | sort | tee $r/ab.txt; save
