#!/usr/bin/env bash
# Session (p) ph: the deterministic mode's two ways (ordered sums in the dK/dV kernel, the dQ
# kernel) on the masked d128 suite problems, two interleaved rounds, final code (4f6ed10): where
# the auto rule's choice stands.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ph}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
only=causal_d128,sliding_window_d128,softcap_causal_d128,alibi_causal_d128,prefix_lm_d128,document_causal_d128,long_sliding_window_d128,long_document_causal_d128
for round in 1 2; do
  for way in ordered kernel; do
    FLEXJIT_DETERMINISTIC_DQ=$way timeout 100 ./flexjit bench --suite suite.json --only $only --bwd-mode deterministic --json $r/${way}_$round.jsonl > $r/${way}_$round.log 2>&1 || tail -2 $r/${way}_$round.log
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j
    return out
O = [load(f"{d}/ordered_{i}.jsonl") for i in (1, 2)]; K = [load(f"{d}/kernel_{i}.jsonl") for i in (1, 2)]
for n in O[0]:
    a = [x[n]["bwd_tflops"] for x in O]; b = [x[n]["bwd_tflops"] for x in K]
    print(f"{n:28} ordered {a[0]:.0f}/{a[1]:.0f}  dq kernel {b[0]:.0f}/{b[1]:.0f}  kernel/ordered {sum(b)/sum(a):.3f}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
