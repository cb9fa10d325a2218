#!/bin/bash
# zzk1: the checks zzj7_trim_query_tiles.patch owed before landing, on the patched build: the
# backward GPU tests beside the new test, then an A/B of main's templates (A) against the patch's
# (B) with cuDNN and FA2 (SDPA) timed in the same call, then racecheck/synccheck and random problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzk1}; r=/tmp/zzk1r/r; mkdir -p $r $out
save() { (cd /tmp/zzk1r && tar czf $out/zzk1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
t0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - t0) )); }
FLEXJIT_CACHE_DIR=/tmp/fct timeout $(( $(left) - 330 )) ./gpu_test_attention --gtest_filter='BwdGpu.QueryTilesPastTheQueriesEndAreLeftOut:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.WarpSpecializedFastDkdv*:BwdGpu.Gqa8To1AndBshd:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:SeqLensGpu.WarpSpecialized*Backward:BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.OrderedModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.SuiteMods' > $r/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[  (PASSED|FAILED) |FAILED \]|Failure" $r/tests.txt | head -30; grep -c "OK \]" $r/tests.txt; save
export FLEXJIT_AUTOTUNE=off
arm() { a=$1; n=$2; shift 2; [ $(left) -lt 150 ] && return; FLEXJIT_TEMPLATE_DIR=$PWD/tpl$a FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 90 ./flexjit bench --suite zzk1.json --json $r/${a}_$n.jsonl "$@" > $r/${a}_$n.log 2>&1 || tail -3 $r/${a}_$n.log; echo "$a $n $(( $(date +%s) - t0 )) s"; save; }
arm A 1; arm B 1
timeout 120 python3 offsuite_peers.py --suite zzk1.json --no-flex > $r/peers.jsonl 2> $r/peers.err; echo "peers rc=$? $(( $(date +%s) - t0 )) s"; save
arm B 2; arm A 2
arm A d1 --bwd-mode deterministic; arm B d1 --bwd-mode deterministic
for a in A B; do echo "== $a vs peers"; python3 ratios_by_time.py $r/${a}_[12].jsonl --peers $r/peers.jsonl 2>&1 | tail -12; done | tee $r/ratios.txt; save
for tool in racecheck synccheck; do
  [ $(left) -lt 70 ] && break
  FLEXJIT_CACHE_DIR=/tmp/fct timeout $(( $(left) - 10 )) compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter=BwdGpu.Gqa8To1AndBshd > $r/$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|hazard|PASSED|FAILED' $r/$tool.txt | tail -3 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; save
done
[ $(left) -gt 40 ] && { FLEXJIT_RANDOM_PROBLEMS=6 FLEXJIT_CACHE_DIR=/tmp/fct timeout $(left) ./gpu_test_attention --gtest_filter='RandomProblemsGpu.*Backward*' > $r/random.txt 2>&1; echo "random rc=$? $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED \]" $r/random.txt | head -8; save; }
