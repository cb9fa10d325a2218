#!/usr/bin/env bash
# (zs) call 6: the overlap of three consumer warpgroups under masks that read no buffer (full form;
# the lean form where it spills), landed: its GPU tests, memcheck and synccheck on the new one,
# and d64_masked.json on 192-row tables beside the 128-row default, three rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zs6}; L=/tmp/zs6l; mkdir -p $out $L
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
(FLEXJIT_CACHE_DIR=/tmp/ft timeout 240 ./gpu_test_attention --gtest_filter='FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks:FwdGpu.WideWarpSpecialized*:FwdGpu.WarpSpecializedRowsPastTheQueriesEnd:FwdGpu.WarpSpecializedTileBoundsWalk' > $L/tests.log 2>&1; echo "tests rc=$?" >> $L/rc) &
(FLEXJIT_CACHE_DIR=/tmp/fm timeout 200 compute-sanitizer --tool memcheck --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter='FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks' > $L/memcheck.log 2>&1; echo "memcheck rc=$?" >> $L/rc;
 FLEXJIT_CACHE_DIR=/tmp/fm timeout 150 compute-sanitizer --tool synccheck --kernel-name kns=attention_fwd --error-exitcode 9 ./gpu_test_attention --gtest_filter='FwdGpu.ThreeWarpgroupsOverTablesOf192RowBlocks' > $L/synccheck.log 2>&1; echo "synccheck rc=$?" >> $L/rc) &
wait
cat $L/rc; grep -E '^\[       OK|^\[  FAILED  \] [A-Z]' $L/tests.log | head -20; grep -hE 'Failure|Which is|Expected' $L/tests.log | head; grep -hE 'ERROR SUMMARY' $L/memcheck.log $L/synccheck.log
echo "tests $(( $(date +%s) - t0 )) s"
for round in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fa timeout 60 ./flexjit bench --no-bwd --suite d64_masked.json --json $L/m128_$round.jsonl > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fa timeout 60 ./flexjit bench --no-bwd --suite d64_masked.json --config m192n128w12s2ws --mask-q-block 192 --json $L/m192_$round.jsonl > /dev/null 2>&1
done
python3 - "$L" <<'PY'
import json,sys,glob,collections,statistics
t=collections.defaultdict(list)
for f in glob.glob(sys.argv[1]+'/*.jsonl'):
    kind=f.split('/')[-1].rsplit('_',1)[0]
    for l in open(f):
        if not l.startswith('{'): continue
        d=json.loads(l)
        if 'fwd_tflops' in d: t[(d['name'],kind)].append((d['fwd_tflops'], d['fwd_config']))
for k in sorted(t): print(f'{k[0]:22s} {k[1]:8s}', ' '.join(f'{x[0]:6.1f}' for x in t[k]), ' median %.1f'%statistics.median([x[0] for x in t[k]]), t[k][0][1])
PY
(cd /tmp && tar czf $out/zs6_logs.tar.gz zs6l)
echo "total $(( $(date +%s) - t0 )) s"
