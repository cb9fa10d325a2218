#!/usr/bin/env bash
# Session (zl), third call: what zl2 ran out of time for (BwdGpu.DeterministicModeTakesTheFasterWayPerCall;
# racecheck on BwdGpu.OrderedModeAscendingPairsBesideADescendingTail, ascending and descending
# pairs in one launch), then a short A/B of this tree against main 771eb0d (flexjit_main),
# deterministic backward, tuning off, alternating, on rows the rule changes and one it keeps.
# Stage in .gpu/<s>/: gpu_test_attention, flexjit, flexjit_main, suite.json, suite64x.json,
# suite_docgqa.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zl3}; r=/tmp/zl3r/r; mkdir -p $r $out
save() { (cd /tmp/zl3r && tar czf $out/zl3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 240 ./gpu_test_attention --gtest_filter=BwdGpu.DeterministicModeTakesTheFasterWayPerCall > $r/tests_d.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 330 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 2000 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeAscendingPairsBesideADescendingTail > $r/san_racecheck.txt 2>&1 &
wait
echo "tests $(( $(date +%s) - t0 )) s"; save
for f in $r/tests_*.txt $r/san_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
grep -A1 'Error: Race' $r/san_racecheck.txt | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -40
export FLEXJIT_AUTOTUNE=off
bench() {  # binary tag suite only
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 60 ./$1 bench --suite $3 --only $4 --bwd-mode deterministic --json $r/b_$2.jsonl > $r/b_$2.log 2>&1
  echo "$2 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2; do
  order="flexjit_main flexjit"; [ $round = 2 ] && order="flexjit flexjit_main"
  for bin in $order; do
    [ $(( $(date +%s) - t0 )) -gt 520 ] && break 2
    bench $bin d128_${bin}_r$round suite.json causal_d128,gqa_causal_d128
    bench $bin d64_${bin}_r$round suite64x.json causal_d64
    bench $bin gqa_${bin}_r$round suite_docgqa.json document_nested_causal_gqa4_d128
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
