#!/bin/bash
# (zzw) 2: the backward GPU tests on the launch groups of 1024 CTAs under documents, then the A/B
# of that build against main's (fast backward) on document masks, key padding, and causal.
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; r=/tmp/zzw2r/r; mkdir -p $r $out
save() { (cd /tmp/zzw2r && tar czf $out/zzw2_tests.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 250 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1; echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' &
go b 'BwdGpu.SuiteMods:BwdGpu.QueryTilesPastTheQueriesEndAreLeftOut' &
go c 'BwdGpu.FastAndDeterministicModes:BwdGpu.HeadDimsThatAreNoMultipleOf64' &
go d 'BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128' &
go e '*GradientGemmsSpanOnlyTheTensorsColumns*:BwdGpu.HopperWgmmaPath' &
go f 'SeqLensGpu.*Backward*:RandomProblemsGpu.*' &
go g 'BwdGpu.OrderedModeLongDocuments:BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.OrderedModeSplitsGqaGroupsOverCtas' &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
save
bash ab2.sh zzw2 mix.json bwd_ms 200 3 "" main:./flexjit_main: new:./flexjit: 2>&1 | grep -v "^zzw2 "
echo "done $(( $(date +%s) - t0 )) s"
