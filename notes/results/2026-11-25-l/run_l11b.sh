#!/usr/bin/env bash
# l11b: GQA causal on the H100 in the three ways (one chain with GQA), two rounds.
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
for k in 1 2; do
  ./flexjit bench --suite suite.json --only gqa_causal_d128,sliding_window_d128 --bwd-mode deterministic --json /tmp/o$k.jsonl > /dev/null 2>/tmp/e.txt || tail -2 /tmp/e.txt
  FLEXJIT_DETERMINISTIC_DQ=kernel ./flexjit bench --suite suite.json --only gqa_causal_d128,sliding_window_d128 --bwd-mode deterministic --json /tmp/k$k.jsonl > /dev/null 2>&1
  ./flexjit bench --suite suite.json --only gqa_causal_d128,sliding_window_d128 --json /tmp/f$k.jsonl > /dev/null 2>&1
done
python3 -c '
import json
for f in ["o1","k1","f1","o2","k2","f2"]:
    for l in open("/tmp/"+f+".jsonl"):
        j = json.loads(l)
        if "name" in j: print(f, j["name"], j.get("bwd_tflops"), j.get("bwd_mode"))
'
