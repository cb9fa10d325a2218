#!/bin/bash
# For the next session with a GPU: what (zzo) left owed. racecheck on the ragged three-stage
# kernels of 7e6ca7e (SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages; memcheck and synccheck
# ran clean in zzo5). Expected: only the write pairs on the dQ staging stores that (zzn)
# documented for three stages (the two warpgroups store one buffer by turns, ordered by the
# writer's empty mbarrier and the dSᵀ exchange's named barriers, which racecheck does not model).
# Setup: .gpu/<name>/ with gpu_test_attention (main's build) and this script; carry [".gpu/<name>"].
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/nextzzo}; r=/tmp/nextzzo_r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 550 compute-sanitizer --tool racecheck --kernel-name kns=attention_bwd_dkdv \
  ./gpu_test_attention --gtest_filter='SeqLensGpu.UnmaskedHeadDims72And80WithThreeStages' > $r/racecheck.txt 2>&1
echo "racecheck rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|OK \]|FAILED" $r/racecheck.txt
grep -oE "(Write|Read)-after-(Write|Read) hazard[^(]*\(" $r/racecheck.txt | sort | uniq -c | head
(cd /tmp/nextzzo_r && tar czf $out/next_zzo.tar.gz r)
