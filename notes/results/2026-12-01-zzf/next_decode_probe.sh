#!/bin/bash
# Prepared in (zzf), not run (no device time left): where decode's remaining gaps to cuDNN go.
# Stage as .gpu/<dir>/ with a stripped libflexjit.so and splits_matrix.py beside this script.
# 1. B=1 steps (1.03-1.15x cuDNN's time): the split count swept (FLEXJIT_DECODE_SPLITS) at 1k and
#    4k keys, pages of 16/32/64, to see whether fewer splits (a cheaper combine) pay.
# 2. B=32 1k pages of 16 (1.13x cuDNN) against the same step contiguous: ncu of one decode launch
#    each (DRAM throughput, warp states, per-SASS-line stalls of the producer lanes).
cd "$(dirname "$0")"; g=$PWD
export FLEXJIT_AUTOTUNE=off PYTHONPATH=$g/../../python:$g/../../scripts:$g FLEXJIT_LIBRARY=$g/libflexjit.so
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
O=${OUT:-/tmp/out}; W=/tmp/wn; mkdir -p $O $W
t0=$(date +%s)
cat > $W/b1.py <<'PY'
from splits_matrix import step
for S in (1024, 4096):
    for page_size in (16, 32, 64):
        step(1, S, page_size, False)
PY
for n in rule 2 4 8 16 32; do
  if [ $n = rule ]; then unset FLEXJIT_DECODE_SPLITS; else export FLEXJIT_DECODE_SPLITS=$n; fi
  FLEXJIT_CACHE_DIR=/tmp/fjn timeout 60 python3 $W/b1.py > $W/b1_$n.jsonl 2> $W/b1_$n.err || tail -2 $W/b1_$n.err
done
unset FLEXJIT_DECODE_SPLITS
echo "sweep $(( $(date +%s) - t0 )) s"
cat > $W/one.py <<'PY'
import sys
from splits_matrix import step
step(32, 1024, int(sys.argv[1]), False)
PY
for page in 16 0; do
  FLEXJIT_CACHE_DIR=/tmp/fjn timeout 200 ncu --kernel-name regex:'flexjit_attention_decode$' --launch-skip 30 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SourceCounters \
    --section LaunchStats --import-source no -o $W/rep_$page python3 $W/one.py $page > $W/ncu_$page.log 2>&1
  ncu -i $W/rep_$page.ncu-rep --print-details all > $W/details_$page.txt 2>&1
  ncu -i $W/rep_$page.ncu-rep --page source --csv --print-source sass > $W/src_$page.csv 2>&1
  grep -E 'Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Stall' $W/details_$page.txt | head -10
  rm -f $W/rep_$page.ncu-rep
done
echo "ncu $(( $(date +%s) - t0 )) s"
tar czf $O/next_decode_probe.tar.gz -C $W .
