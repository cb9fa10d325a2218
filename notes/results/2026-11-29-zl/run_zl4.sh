#!/usr/bin/env bash
# Session (zl), fourth call: the writer warps read each tile name in lane 0 and shuffle it
# (read_tile_name_in_warp), after zl3's racecheck reported the producer's rewrite of a wrapped
# tile-name entry against lanes 1-31's reads. racecheck (kns=bwd_dkdv) on the two sanitizer
# tests, synccheck on the tail test, the ordered tests beside them; then a short A/B against main
# 771eb0d (flexjit_main). Stage in .gpu/<s>/: gpu_test_attention, flexjit, flexjit_main,
# suite.json, suite64x.json, suite_docgqa.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zl4}; r=/tmp/zl4r/r; mkdir -p $r $out
save() { (cd /tmp/zl4r && tar czf $out/zl4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
T=BwdGpu.OrderedModeAscendingPairsBesideADescendingTail
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 290 ./gpu_test_attention --gtest_filter='BwdGpu.Ordered*:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.DeterministicModeSumsDqInOrder' > $r/tests_a.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_r1 timeout 290 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 2000 ./gpu_test_attention --gtest_filter=$T > $r/san_racecheck_tail.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_r2 timeout 290 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 2000 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeMoreKvTilesThanResidentCtas > $r/san_racecheck_small.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_s timeout 290 compute-sanitizer --tool synccheck --error-exitcode 1 ./gpu_test_attention --gtest_filter=$T > $r/san_synccheck.txt 2>&1 &
wait
echo "tests $(( $(date +%s) - t0 )) s"; save
for f in $r/tests_*.txt $r/san_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
for f in $r/san_racecheck_*.txt; do echo "$(basename $f):"; grep -A1 'Error: Race' $f | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -6; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -40
export FLEXJIT_AUTOTUNE=off
bench() {  # binary tag suite only
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 60 ./$1 bench --suite $3 --only $4 --bwd-mode deterministic --json $r/b_$2.jsonl > $r/b_$2.log 2>&1
  echo "$2 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2; do
  order="flexjit_main flexjit"; [ $round = 2 ] && order="flexjit flexjit_main"
  for bin in $order; do
    [ $(( $(date +%s) - t0 )) -gt 480 ] && break 2
    bench $bin d128_${bin}_r$round suite.json causal_d128,document_causal_d128
    bench $bin gqa_${bin}_r$round suite_docgqa.json document_nested_causal_gqa4_d128,document_causal_gqa8_d128
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_[a-z0-9]+_(flexjit\w*?)_r\d", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("deterministic backward TF/s: main 771eb0d vs this tree")
for n, d in sorted(rows.items()):
    if d["flexjit_main"] and d["flexjit"]:
        print(f"{n:34s} main {d['flexjit_main']} new {d['flexjit']} x{statistics.mean(d['flexjit']) / statistics.mean(d['flexjit_main']):.3f}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
