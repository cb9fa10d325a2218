#!/usr/bin/env bash
# Session (zh) zh1: what (zg) left unrun on a GPU, and where the deterministic documents backward
# spends its time.
#   1. the Python GPU tests on 59b0870's package (automatic masks built during a graph capture,
#      the stream reader), beside compute-sanitizer racecheck on BwdGpu.OrderedModeOnePerHeadDim
#      (the ordered kernels' lean form, 2fba0dc) with the time zg7's 215 s did not give it;
#   2. per-kernel durations (ncu, the card's own clocks) of the documents d128 backward in the fast
#      mode and in the deterministic mode's two ways (the dQ kernel, the ordered sums).
set -u
cd "$(dirname "$0")"; g=$PWD
out=${OUT:-/tmp/zh1}; r=$out/r; mkdir -p $r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 540 compute-sanitizer --tool racecheck --error-exitcode 1 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_racecheck.txt 2>&1 &
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links $g/wheels pytest > /dev/null 2>&1
(cd ../../python && FLEXJIT_LIBRARY=$g/libflexjit.so FLEXJIT_CACHE_DIR=/tmp/fc_py PYTHONPATH=$PWD timeout 300 python3 -m pytest -q -rs tests > $r/pytest.txt 2>&1; echo "pytest rc=$? $(( $(date +%s) - t0 )) s")
tail -3 $r/pytest.txt
export FLEXJIT_AUTOTUNE=off
for p in document_causal_d128 long_document_causal_d128; do
  for mode in fast kernel ordered; do
    bm=deterministic; [ $mode = fast ] && bm=fast
    FLEXJIT_DETERMINISTIC_DQ=$mode FLEXJIT_CACHE_DIR=/tmp/fc_n timeout 120 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --kernel-name regex:'bwd|memset|convert|fill' --launch-skip 10 --launch-count 10 --csv ./flexjit bench --suite ../../bench/suite.json --only $p --bwd-mode $bm > $r/ncu_${p}_$mode.csv 2> $r/ncu_${p}_$mode.err
    echo "$p $mode rc=$? $(( $(date +%s) - t0 )) s"
    grep -E 'gpu__time_duration' $r/ncu_${p}_$mode.csv | awk -F'","' '{print $5, $NF}' | sed 's/"//g' | sort | uniq -c | head -12
  done
  for mode in fast kernel ordered; do
    bm=deterministic; [ $mode = fast ] && bm=fast
    FLEXJIT_DETERMINISTIC_DQ=$mode FLEXJIT_CACHE_DIR=/tmp/fc_n timeout 60 ./flexjit bench --suite ../../bench/suite.json --only $p --bwd-mode $bm --json $r/b_${p}_$mode.jsonl > /dev/null 2>&1
    python3 -c "import json,sys; [print('$p $mode', o.get('bwd_ms'), o.get('bwd_tflops'), o.get('bwd_mode'), o.get('bwd_configs')) for o in map(json.loads, open(sys.argv[1])) if 'bwd_ms' in o]" $r/b_${p}_$mode.jsonl
  done
done
wait
echo "racecheck: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' $r/san_racecheck.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -o 'Race reported between [A-Za-z]* access at [^(]*' $r/san_racecheck.txt | sort | uniq -c | head
cd $out && tar czf zh1.tar.gz r && rm -rf r
