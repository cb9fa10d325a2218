#!/usr/bin/env bash
# Session (zg) zg4: the packed-argument wrapper (working tree) against HEAD's package (b4eb8e1),
# both on HEAD's library: the Python GPU tests on the new wrapper, then scripts/latency.py
# alternating (two rounds each) and pieces.py on the new wrapper.
set -u
cd "$(dirname "$0")"; g=$PWD
out=${OUT:-/tmp/zg4}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links $g/wheels pytest > /dev/null 2>&1
export FLEXJIT_LIBRARY=$g/libflexjit.so
(cd ../../python && FLEXJIT_CACHE_DIR=/tmp/fc_py PYTHONPATH=$PWD timeout 250 python3 -m pytest -q -x -rs tests > $out/pytest.txt 2>&1; echo "pytest rc=$?")
tail -3 $out/pytest.txt; echo "$(( $(date +%s) - t0 )) s"
export FLEXJIT_CACHE_DIR=/tmp/fc_lat
for round in 1 2; do
  PYTHONPATH=$g/python_head/python timeout 100 python3 ../../scripts/latency.py > $out/head_r$round.jsonl 2> $out/head_r$round.err
  PYTHONPATH=$g/../../python timeout 100 python3 ../../scripts/latency.py > $out/new_r$round.jsonl 2> $out/new_r$round.err
done
echo "latency $(( $(date +%s) - t0 )) s"
python3 - $out <<'PY' | tee $out/latency_summary.txt
import json, sys, collections
r = sys.argv[1]
rows = collections.defaultdict(dict)
for tag in ("head", "new"):
    for k in (1, 2):
        for line in open(f"{r}/{tag}_r{k}.jsonl"):
            o = json.loads(line)
            if "system" not in o: continue
            rows[(o["name"], o["system"])].setdefault(tag, []).append((o.get("loop_us"), o.get("graph_us")))
for (name, system), d in rows.items():
    print(f"{name:26s} {system:30s} " + "  ".join(f"{t}: loop {[x[0] for x in v]} graph {[x[1] for x in v]}" for t, v in d.items()))
PY
PYTHONPATH=$g/../../python timeout 120 python3 pieces.py > $out/pieces_new.jsonl 2>&1; grep -E 'whole|C call alone|graph' $out/pieces_new.jsonl
