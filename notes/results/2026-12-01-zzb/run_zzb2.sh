#!/bin/bash
# zzb2: the affine pass on masked tiles with column values (tmpl_new) against main (tmpl_old); tests on tmpl_new.
cd "$(dirname "$0")"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p $O $W
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $W/gpu.txt
for round in 1 2 3; do
  for t in old new; do
    FLEXJIT_TEMPLATE_DIR=tmpl_$t ./flexjit bench --suite ad.json --no-bwd --json $W/ab_${t}_$round.jsonl > $W/ab_${t}_$round.txt 2>&1
  done
done
export FLEXJIT_TEMPLATE_DIR=tmpl_new
timeout 240 ./gpu_test_attention --gtest_filter='FwdGpu.*Affine*:FwdGpu.SuiteMods:SeqLensGpu.WarpSpecializedForward:FwdGpu.HalfPrecisionAndHeadDims:Configs/NanGpu.Forward*:Configs/NanGpu.Masked*' > $W/tests.txt 2>&1; echo "rc=$?" >> $W/tests.txt
FLEXJIT_RANDOM_PROBLEMS=10 FLEXJIT_TEST_SEED=20261201 timeout 200 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.*' > $W/random.txt 2>&1; echo "rc=$?" >> $W/random.txt
grep -E '^\[  (PASSED|FAILED) |FAILED  \]|rc=' $W/tests.txt $W/random.txt
for f in $W/ab_*.jsonl; do python3 -c "
import json
for l in open('$f'):
  try: r=json.loads(l)
  except: continue
  if 'name' in r: print('$f'.split('/')[-1], r['name'], r.get('fwd_tflops'), r.get('fwd_config'))
"; done
tar czf $O/zzb2.tar.gz -C $W .
