#!/bin/bash
# zzb5: sanitizers on the landed build's affine + documents forward; ncu of the decode kernel, cp.async against TMA tiles.
cd "$(dirname "$0")"
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fjcache
O=${OUT:-/tmp/out}; W=/tmp/w5; mkdir -p $O $W
F='FwdGpu.ScoreModsAffineInKeys'
timeout 150 compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter=$F > $W/memcheck.txt 2>&1; echo "rc=$?" >> $W/memcheck.txt
timeout 120 compute-sanitizer --tool synccheck ./gpu_test_attention --gtest_filter=$F > $W/synccheck.txt 2>&1; echo "rc=$?" >> $W/synccheck.txt
timeout 150 compute-sanitizer --tool racecheck --racecheck-report hazard ./gpu_test_attention --gtest_filter=$F > $W/racecheck.txt 2>&1; echo "rc=$?" >> $W/racecheck.txt
for f in memcheck synccheck racecheck; do echo "== $f"; grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard|PASSED|FAILED|rc=' $W/$f.txt | head -8; done
for c in m16n64w4s3 m16n64w4s3t; do
  timeout 120 ncu --kernel-name flexjit_attention_decode --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy ./flexjit bench --suite dec.json --only decode_b16_kv32k --no-bwd --decode-config $c > $W/ncu_$c.txt 2>&1
  echo "== ncu $c"; grep -E 'DRAM Throughput|Duration|Memory Throughput|L2 Hit|Mem Busy|Max Bandwidth|Issue Slots|Warp Cycles Per Issued|Achieved Occupancy|Registers|Stall|L1/TEX Hit|Waves' $W/ncu_$c.txt | head -30
done
tar czf $O/zzb5.tar.gz -C $W .
