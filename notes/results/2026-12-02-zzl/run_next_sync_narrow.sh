#!/bin/bash
# For a session with a GPU: the GPU run that zzl_sync_narrow.patch owes (the synchronous dK/dV
# kernels and the dQ kernel over the tensors' columns; prepared in (zzl), CPU-checked only).
# Setup, on this machine: git am notes/results/2026-12-02-zzl/zzl_sync_narrow.patch (or apply it
# to a branch), build, then a .gpu/<name> folder with the stripped build/flexjit and
# build/tests/gpu_test_attention, tplA = main's templates, tplB = the patch's, bwd_hd.json from
# this folder, and this script; run with carry [".gpu/<name>"].
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/next}; r=/tmp/nextr/r; mkdir -p $r $out
save() { (cd /tmp/nextr && tar czf $out/next.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - t0) )); }
FLEXJIT_CACHE_DIR=/tmp/fct1 timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.SynchronousKernelsSpanOnlyTheTensorsColumns:BwdGpu.BlockConfigs' > $r/tests1.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fct2 timeout 200 ./gpu_test_attention --gtest_filter='BufferGradGpu.*' > $r/tests2.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fct3 timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.HeadDimsThatAreNoMultipleOf64:SeqLensGpu.HeadDimsThatAreNoMultipleOf64' > $r/tests3.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fct4 FLEXJIT_RANDOM_PROBLEMS=10 timeout 200 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/tests4.txt 2>&1 &
wait
for f in $r/tests*.txt; do grep -E "OK \]|FAILED|Failure" $f | head -12; done; save
export FLEXJIT_AUTOTUNE=off
arm() { a=$1; n=$2; shift 2; [ $(left) -lt 60 ] && return; FLEXJIT_TEMPLATE_DIR=$PWD/tpl$a FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 110 ./flexjit bench --suite bwd_hd.json --only noop_d80,causal_d96,causal_d72,vith_d80_s257 --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
# The deterministic mode's dQ-kernel way ('g' dK/dV + dQ kernel), then mma.sync (sm_80's path).
arm A g1 --bwd-mode deterministic --dkdv-config m64n128w8s2g --dq-config m64n64w4s2g
arm B g1 --bwd-mode deterministic --dkdv-config m64n128w8s2g --dq-config m64n64w4s2g
arm A m1 --bwd-mode deterministic --dkdv-config m64n64w4s2 --dq-config m64n64w4s2
arm B m1 --bwd-mode deterministic --dkdv-config m64n64w4s2 --dq-config m64n64w4s2
arm B g2 --bwd-mode deterministic --dkdv-config m64n128w8s2g --dq-config m64n64w4s2g
arm A g2 --bwd-mode deterministic --dkdv-config m64n128w8s2g --dq-config m64n64w4s2g
[ $(left) -gt 60 ] && { FLEXJIT_CACHE_DIR=/tmp/fct1 timeout $(( $(left) - 10 )) compute-sanitizer --tool memcheck ./gpu_test_attention --gtest_filter=BwdGpu.SynchronousKernelsSpanOnlyTheTensorsColumns > $r/memcheck.txt 2>&1; grep -E 'ERROR SUMMARY|OK \]' $r/memcheck.txt; save; }
