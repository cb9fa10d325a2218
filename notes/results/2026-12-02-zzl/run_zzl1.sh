#!/bin/bash
# zzl1: forward P V over V's own columns (DV_GEMM): its GPU tests, then an A/B of main's templates
# (A) against the new ones (B) on head dims that are no multiple of 64, with cuDNN and FA2 (SDPA)
# timed in the same call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzl1}; r=/tmp/zzl1r/r; mkdir -p $r $out
save() { (cd /tmp/zzl1r && tar czf $out/zzl1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
left() { echo $(( 575 - ($(date +%s) - t0) )); }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv > $r/gpu.txt 2>&1
T="FLEXJIT_CACHE_DIR=/tmp/fct"
FLEXJIT_CACHE_DIR=/tmp/fct1 timeout 170 ./gpu_test_attention --gtest_filter='FwdGpu.OutputGemmSpansOnlyVsColumns:FwdGpu.HeadDimsThatAreNoMultipleOf64:FwdGpu.HalfPrecisionAndHeadDims' > $r/tests1.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fct2 timeout 170 ./gpu_test_attention --gtest_filter='BwdGpu.GradientGemmsSpanOnlyTheTensorsColumns:BwdGpu.HeadDimsThatAreNoMultipleOf64' > $r/tests2.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fct3 FLEXJIT_RANDOM_PROBLEMS=10 timeout 170 ./gpu_test_attention --gtest_filter='RandomProblemsGpu.AnyHeadDimForwardAndBackward' > $r/tests3.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fct4 timeout 170 ./gpu_test_attention --gtest_filter='SeqLensGpu.HeadDimsThatAreNoMultipleOf64:BwdGpu.TilesWithAWholeSlabPastTheHeadDim:FwdGpu.SuiteMods' > $r/tests4.txt 2>&1 &
wait
echo "tests $(( $(date +%s) - t0 )) s"; for f in $r/tests[1234].txt; do grep -E "OK \]|FAILED \]|Failure|PASSED|timeout" $f | head -12; done; save
export FLEXJIT_AUTOTUNE=off
arm() { a=$1; n=$2; shift 2; [ $(left) -lt 100 ] && return; FLEXJIT_TEMPLATE_DIR=$PWD/tpl$a FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 100 ./flexjit bench --suite fwd_hd.json --no-bwd --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
arm A 1; arm B 1
timeout 150 python3 offsuite_peers.py --suite fwd_hd.json --no-flex > $r/peers.jsonl 2> $r/peers.err; echo "peers rc=$? $(( $(date +%s) - t0 )) s"; save
arm B 2; arm A 2
for a in A B; do echo "== $a vs peers"; python3 ratios_by_time.py $r/${a}_[12].jsonl --peers $r/peers.jsonl 2>&1 | tail -16; done | tee $r/ratios.txt; save
# The synchronous kernels (sm_80's mma.sync path and the 'g' wgmma kernel), forced, one round each.
sarm() { a=$1; n=$2; c=$3; [ $(left) -lt 40 ] && return; FLEXJIT_TEMPLATE_DIR=$PWD/tpl$a FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout $(( $(left) - 15 )) ./flexjit bench --suite fwd_hd.json --no-bwd --config $c --only noop_d80,causal_d96,causal_d72,noop_d128 --json $r/${a}_$n.jsonl > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
sarm A mma m128n64w4s2; sarm B mma m128n64w4s2; sarm B g m128n128w8s2g; sarm A g m128n128w8s2g
for f in $r/[AB]_*.log; do echo "== $f"; grep -v '^{' $f | head -24; done
