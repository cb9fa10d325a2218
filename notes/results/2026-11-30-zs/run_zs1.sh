#!/usr/bin/env bash
# (zs) call 1: (zr)'s two prepared patches on a GPU — the forward's tile-bounds walk and the d128
# per-sequence-length tiles (m128n64, two CTAs per SM).
# 1. the whole gpu_test_attention in 4 shards, memcheck on the walk's test and on the d128
#    per-sequence-length defaults; 2. forward A/B: walk vs tables, m192 vs m128, against main's binary.
# Stage in .gpu/<s>/: gpu_test_attention, flexjit, flexjit_main (strip -o), suite.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zs1}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $out/gpu.txt
for i in 0 1 2 3; do
  (FLEXJIT_CACHE_DIR=/tmp/fs$i GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 330 ./gpu_test_attention > $out/shard$i.log 2>&1; echo "shard$i rc=$?" >> $out/rc) &
done
(export FLEXJIT_CACHE_DIR=/tmp/fm1; timeout 300 compute-sanitizer --tool memcheck --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter='SeqLensGpu.DefaultConfigsBshdSqBelowSkvAndDeterminism' > $out/san_seqlens.log 2>&1; echo "memcheck seqlens rc=$?" >> $out/rc) &
(export FLEXJIT_CACHE_DIR=/tmp/fm2; timeout 300 compute-sanitizer --tool memcheck --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedTileBoundsWalk' > $out/san_walk.log 2>&1; echo "memcheck walk rc=$?" >> $out/rc;
 timeout 200 compute-sanitizer --tool synccheck --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedTileBoundsWalk' > $out/sync_walk.log 2>&1; echo "synccheck walk rc=$?" >> $out/rc) &
wait
echo "tests $(( $(date +%s) - t0 )) s"
cat $out/rc
for f in $out/shard*.log; do echo "$(basename $f): $(grep -cE '^\[       OK' $f) ok, $(grep -cE '^\[  FAILED  \] [A-Z]' $f) failed; last: $(grep -E '^\[ +(RUN|OK|FAILED) +\]' $f | tail -1)"; grep -E '^\[  FAILED  \] [A-Z]' $f | head; done
grep -hE 'ERROR SUMMARY' $out/san_*.log $out/sync_*.log
Q=causal_d64,causal_d128,sliding_window_d128,prefix_lm_d128,noop_d64,document_causal_d128
for round in 1 2 3; do
  [ $(( $(date +%s) - t0 )) -gt 520 ] && break
  for c in m128n128w8s2ws m192n128w12s2ws; do
    FLEXJIT_CACHE_DIR=/tmp/fb timeout 60 ./flexjit bench --no-bwd --no-block-mask --suite suite.json \
      --only causal_d64,causal_d128,sliding_window_d128,prefix_lm_d128 --config $c --json $out/walk_${c}_$round.jsonl > /dev/null 2>&1
  done
  FLEXJIT_CACHE_DIR=/tmp/fb timeout 60 ./flexjit bench --no-bwd --suite suite.json --only $Q --json $out/new_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fc timeout 60 ./flexjit_main bench --no-bwd --suite suite.json --only $Q --json $out/main_$round.jsonl > /dev/null 2>&1
done
python3 - "$out" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.jsonl'):
    kind=f.split('/')[-1].rsplit('_',1)[0]
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append(d['fwd_tflops'])
for k in sorted(t): print(f'{k[0]:22s} {k[1]:28s}', ' '.join(f'{x:6.1f}' for x in t[k]), ' median %.1f'%statistics.median(t[k]))
PY
echo "total $(( $(date +%s) - t0 )) s"
