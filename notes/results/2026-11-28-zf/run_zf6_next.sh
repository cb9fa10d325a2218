#!/usr/bin/env bash
# Session (zf) zf6: per-call latency (scripts/latency.py) through main's Python package and the
# faster wrapper, alternating; then the Python GPU tests on the new wrapper.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/zf6}; mkdir -p $out
export FLEXJIT_LIBRARY=$PWD/.gpu/zf/libflexjit.so FLEXJIT_CACHE_DIR=/tmp/fc_lat
for round in 1 2; do
  PYTHONPATH=$PWD/.gpu/zf/python_base/python timeout 100 python3 scripts/latency.py > $out/base_r$round.jsonl 2> $out/base_r$round.err
  PYTHONPATH=$PWD/python timeout 100 python3 scripts/latency.py > $out/new_r$round.jsonl 2> $out/new_r$round.err
done
python3 - $out <<'PY'
import json, sys, collections
out = sys.argv[1]
rows = collections.defaultdict(dict)
for tag in ("base", "new"):
    for r in (1, 2):
        for line in open(f"{out}/{tag}_r{r}.jsonl"):
            o = json.loads(line)
            if "system" not in o: continue
            rows[(o["name"], o["system"])].setdefault(tag, []).append((o.get("loop_us"), o.get("graph_us")))
for (name, system), d in rows.items():
    print(f"{name:28s} {system:30s} " + "  ".join(f"{t}: loop {[x[0] for x in v]} graph {[x[1] for x in v]}" for t, v in d.items()))
PY
python3 -c "import pytest" 2>/dev/null && (cd python && PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -x tests 2>&1 | tail -5) || echo "no pytest on the device"
