#!/bin/bash
# zzh4: (a) d64 causal forwards over two and three K/V stages (does a deeper ring hide the next
# work tile's first loads on short walks?), two alternating rounds; (b) ncu of the S=257 causal
# d128 forward: sections, tensor-pipe activity, per-SASS-line stall samples.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzh4}; r=/tmp/zzh4r/r; mkdir -p $r $out
save() { (cd /tmp/zzh4r && tar czf $out/zzh4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc4
t0=$(date +%s)
for round in 1 2; do
  for c in m128n128w8s2ws m128n128w8s3ws; do
    timeout 100 ./flexjit bench --suite short4.json --only causal_s257_b32_d64,causal_s512_b32_d64,causal_s1024_b16_d64,causal_s4096_b4_d64 --no-bwd --config $c --json $r/${c}_$round.jsonl > $r/${c}_$round.log 2>&1 || tail -3 $r/${c}_$round.log
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
for f in $r/*_1.jsonl $r/*_2.jsonl; do echo "$(basename $f): $(grep -o '"fwd_tflops":[0-9.]*,"name":"[a-z0-9_]*' $f | sed 's/"fwd_tflops"://;s/"name"://' | tr '\n' ' ')"; done
save
prof() {
  local tag=$1; shift 1
  timeout 150 ncu --kernel-name regex:'attention_fwd$' --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpc__cycles_elapsed.max,sm__cycles_active.min,sm__cycles_active.max \
    --import-source no -o $r/rep_$tag ./flexjit bench --suite short4.json --no-bwd "$@" > $r/ncu_$tag.log 2>&1
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$tag.ncu-rep --print-details all > $r/details_$tag.txt 2>&1
  ncu -i $r/rep_$tag.ncu-rep --page source --csv --print-source sass > $r/src_$tag.csv 2>&1
  grep -E 'Duration|gmma|Issue Slots Busy|Executed Ipc A|SM Frequency|cycles_active|DRAM Throughput|L2 Hit' $r/details_$tag.txt | head -14
  rm -f $r/rep_$tag.ncu-rep
  save
}
prof s257 --only causal_s257_b32
prof s4096 --only causal_s4096_b4
echo "$(( $(date +%s) - t0 )) s"; save
