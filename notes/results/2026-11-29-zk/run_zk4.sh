#!/usr/bin/env bash
# Session (zk), fourth call: racecheck to the end on the ordered dK/dV kernels only
# (--kernel-name kns=bwd_dkdv: the forward, preprocess and convert kernels run uninstrumented),
# OrderedModeOnePerHeadDim (descending masked and unmasked, ascending documents, d64/d128/d256)
# beside OrderedModeMoreKvTilesThanResidentCtas (d256, 141 kv tiles, both directions). Every
# hazard printed, then counted by the pair of functions.
# Stage in .gpu/<s>/: gpu_test_attention (this tree), this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zk4}; r=/tmp/zk4r/r; mkdir -p $r $out
save() { (cd /tmp/zk4r && tar czf $out/zk4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
for t in OrderedModeOnePerHeadDim OrderedModeMoreKvTilesThanResidentCtas; do
  FLEXJIT_CACHE_DIR=/tmp/fc_$t timeout 530 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 2000 ./gpu_test_attention --gtest_filter=BwdGpu.$t > $r/race_$t.txt 2>&1 &
done
wait
for f in $r/race_*.txt; do
  echo "$(basename $f): $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED|OK \]' $f | tr '\n' ' ')"
  echo "  reports: $(grep -c 'Error: Race' $f)"
  grep -A1 'Error: Race' $f | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -12
done
echo "$(( $(date +%s) - t0 )) s"
save
