#!/bin/bash
# zzk3: main at 5e9e37d (the trim and the uneven head splits landed): every backward GPU test that
# zzk1/zzk2 did not run on this build, the buffer gradients, NaN and random problems (12 per test),
# in six gtest shards side by side; then cuDNN's GQA 7:1 backward twice more (its time moved
# between 0.224 and 0.447 ms across sessions).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzk3}; r=/tmp/zzk3r/r; mkdir -p $r $out
save() { (cd /tmp/zzk3r && tar czf $out/zzk3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
left() { echo $(( 560 - ($(date +%s) - t0) )); }
F='BufferGradGpu.*:BwdGpu.*:NegativeScaleGpu.*:RandomProblemsGpu.*:Configs/NanGpu.BackwardPropagatesNan/*'
F="$F-BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeSplitsGqaGroupsOverCtas:BwdGpu.OrderedModeSplitsGqaGroupsOverCtas:BwdGpu.DeterministicModeSumsDqInOrder"
N=6
for i in $(seq 0 $((N-1))); do
  (GTEST_TOTAL_SHARDS=$N GTEST_SHARD_INDEX=$i FLEXJIT_RANDOM_PROBLEMS=12 FLEXJIT_CACHE_DIR=/tmp/fc3_$i timeout $(( $(left) - 90 )) ./gpu_test_attention --gtest_filter="$F" > $r/shard_$i.txt 2>&1; echo "shard $i rc=$? $(( $(date +%s) - t0 )) s") &
done
wait
grep -hE "^\[  (PASSED|FAILED) |FAILED \]|Failure" $r/shard_*.txt | sort | uniq -c | head -30; grep -h "OK \]" $r/shard_*.txt | wc -l; save
for i in 1 2; do
  [ $(left) -lt 40 ] && break
  timeout $(( $(left) - 5 )) python3 offsuite_peers.py --suite zzk2.json --only gqa7_s1500_b3,gqa6_s3000_b2 --no-flex > $r/peers_$i.jsonl 2> $r/peers_$i.err
  echo "peers $i rc=$? $(grep -o '"bwd_ms": [0-9.]*, "system": "[a-z0-9]*", "name": "[a-z0-9_]*"' $r/peers_$i.jsonl | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; save
done
