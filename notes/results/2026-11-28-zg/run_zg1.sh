#!/usr/bin/env bash
# Session (zg) zg1: the landing call owed by (zf). The decode GPU tests on the new decode.cpp
# (9191e48), the Python GPU tests on the new wrapper (d651c1e), then scripts/latency.py through
# main's package before d651c1e (8168e40) and through HEAD's, alternating, both on HEAD's library.
set -u
cd "$(dirname "$0")"; g=$PWD
out=${OUT:-/tmp/zg1}; r=/tmp/zg1r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 240 ./gpu_test_attention --gtest_filter='DecodeGpu.*:PagedKvGpu.*:*Decode*Gpu*' > $r/t_decode.txt 2>&1
echo "decode tests rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $r/t_decode.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E '^\[  FAILED|seed' $r/t_decode.txt | head -8
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links $g/wheels pytest > $r/pip.txt 2>&1
echo "pytest: $(python3 -c 'import pytest; print(pytest.__version__)' 2>&1 | tail -1)"
export FLEXJIT_LIBRARY=$g/libflexjit.so
(cd ../../python && FLEXJIT_CACHE_DIR=/tmp/fc_py PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -rs tests > $r/pytest.txt 2>&1; echo "pytest rc=$?")
tail -4 $r/pytest.txt; echo "$(( $(date +%s) - t0 )) s"
export FLEXJIT_CACHE_DIR=/tmp/fc_lat
for round in 1 2; do
  PYTHONPATH=$g/python_base/python timeout 100 python3 ../../scripts/latency.py > $r/base_r$round.jsonl 2> $r/base_r$round.err
  PYTHONPATH=$g/../../python timeout 100 python3 ../../scripts/latency.py > $r/new_r$round.jsonl 2> $r/new_r$round.err
  echo "latency round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/latency_summary.txt
import json, sys, collections
r = sys.argv[1]
rows = collections.defaultdict(dict)
for tag in ("base", "new"):
    for k in (1, 2):
        for line in open(f"{r}/{tag}_r{k}.jsonl"):
            o = json.loads(line)
            if "system" not in o: continue
            rows[(o["name"], o["system"])].setdefault(tag, []).append((o.get("loop_us"), o.get("graph_us")))
for (name, system), d in rows.items():
    print(f"{name:28s} {system:30s} " + "  ".join(f"{t}: loop {[x[0] for x in v]} graph {[x[1] for x in v]}" for t, v in d.items()))
PY
cd /tmp/zg1r && tar czf $out/zg1.tar.gz r
