#!/bin/bash
# zzo3: problems drawn at random from fresh seeds, more draws than the default 6 (forward and
# backward against the float64 reference; decode; learnable buffers), processes in parallel.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzo3}; r=/tmp/zzo3r/r; mkdir -p $r $out
save() { (cd /tmp/zzo3r && tar czf $out/zzo3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
run() { n=$1; f=$2; k=$3; FLEXJIT_CACHE_DIR=/tmp/fc_$n FLEXJIT_RANDOM_PROBLEMS=$k timeout 480 ./gpu_test_attention --gtest_filter="$f" > $r/$n.txt 2>&1; echo "$n rc=$? $(( $(date +%s) - t0 )) s"; }
run padded1 RandomProblemsGpu.PaddedBatchesForwardAndBackward 24 &
run padded2 RandomProblemsGpu.PaddedBatchesForwardAndBackward 24 &
run ragged1 RandomProblemsGpu.RaggedBatchesForwardAndBackward 24 &
run ragged2 RandomProblemsGpu.RaggedBatchesForwardAndBackward 24 &
run anyhd1 RandomProblemsGpu.AnyHeadDimForwardAndBackward 24 &
run anyhd2 RandomProblemsGpu.AnyHeadDimForwardAndBackward 24 &
run decode DecodeGpu.RandomProblems 40 &
run bufgrad BufferGradGpu.RandomProblems 24 &
wait
grep -hE "seed|OK \]|FAILED|Failure|error" $r/*.txt | head -60
echo "done $(( $(date +%s) - t0 )) s"; save
