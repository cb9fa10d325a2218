#!/usr/bin/env bash
# (zzzs) A wide draw of random problems against the float64 reference: 12 gtest processes side by
# side on one GPU, each with its own fresh seed (printed with every problem), 40 problems each,
# stopped at LIMIT seconds. Carry .gpu/sweep.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/sw}; r=/tmp/swr/r; mkdir -p $out
LIMIT=${LIMIT:-300}
device_start $r
device_unpack .
export FLEXJIT_RANDOM_PROBLEMS=40
i=0
for t in RandomProblemsGpu.PaddedBatchesForwardAndBackward RandomProblemsGpu.AnyHeadDimForwardAndBackward \
         RandomProblemsGpu.RaggedBatchesForwardAndBackward; do
  for k in 1 2 3; do i=$((i+1)); device_tests "p$i" ./gta "$t" $LIMIT; done
done
for k in 1 2; do i=$((i+1)); device_tests "p$i" ./gta DecodeGpu.RandomProblems $LIMIT; done
i=$((i+1)); device_tests "p$i" ./gta BufferGradGpu.RandomProblems $LIMIT
wait
echo "problems checked: $(cat $r/tests_*.txt | grep -c '^\[ problem')"
echo "failures:"; grep -h -B2 -A12 "Failure\|threw" $r/tests_*.txt | head -150
device_failures | grep -v "of seed" | head
(cd /tmp/swr && tar czf $out/sweep.tar.gz r)
