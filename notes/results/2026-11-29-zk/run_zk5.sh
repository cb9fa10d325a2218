#!/usr/bin/env bash
# Session (zk), fifth call: the ascending sums with GQA under document masks (branch zk-asc-gqa:
# codegen::ordered_dq_ascending without its GQA condition) against main b8e96e2 (flexjit_main:
# descending with GQA), deterministic backward, two rounds alternating, tuning off, on
# suite_docgqa.json (the suite's document problems with GQA 4:1 and 8:1, d64 to d256). Then, the
# benchmarks done, the branch's GPU tests (the new OrderedModeDocumentsWithGqa, OrderedModeOnePerHeadDim
# with GQA 2:1 documents, DeterministicModeSumsDqInOrder) beside memcheck on the first two and
# racecheck (dK/dV kernels only) on OrderedModeOnePerHeadDim.
# Stage in .gpu/<s>/: flexjit (branch), flexjit_main, gpu_test_attention (branch), suite_docgqa.json, this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zk5}; r=/tmp/zk5r/r; mkdir -p $r $out
save() { (cd /tmp/zk5r && tar czf $out/zk5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
for round in 1 2; do
  order="flexjit_main flexjit"; [ $round = 2 ] && order="flexjit flexjit_main"
  for bin in $order; do
    FLEXJIT_CACHE_DIR=/tmp/fc_$bin timeout 70 ./$bin bench --suite suite_docgqa.json --bwd-mode deterministic --json $r/b_${bin}_r$round.jsonl > $r/b_${bin}_r$round.log 2>&1
    echo "$bin r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = "main" if "flexjit_main" in f else "branch"
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("deterministic backward TF/s: main b8e96e2 (descending with GQA) vs zk-asc-gqa (ascending)")
for n, d in sorted(rows.items()):
    if d["main"] and d["branch"]:
        print(f"{n:34s} main {d['main']} branch {d['branch']} x{statistics.mean(d['branch']) / statistics.mean(d['main']):.3f}")
PY
save
unset FLEXJIT_AUTOTUNE
FLEXJIT_CACHE_DIR=/tmp/fc_ta timeout 190 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeDocumentsWithGqa:BwdGpu.OrderedModeOnePerHeadDim' > $r/tests_a.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_tb timeout 190 ./gpu_test_attention --gtest_filter='BwdGpu.DeterministicModeSumsDqInOrder' > $r/tests_b.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_mem timeout 190 compute-sanitizer --tool memcheck --error-exitcode 1 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeDocumentsWithGqa:BwdGpu.OrderedModeOnePerHeadDim' > $r/san_memcheck.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 190 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 2000 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim' > $r/san_racecheck.txt 2>&1 &
wait
for f in $r/tests_*.txt $r/san_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
grep -A1 'Error: Race' $r/san_racecheck.txt | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -40
echo "$(( $(date +%s) - t0 )) s"
save
