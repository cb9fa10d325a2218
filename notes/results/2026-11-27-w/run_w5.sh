#!/usr/bin/env bash
# Session (w) w5, main at 16972f6 on an H200: flexjit (forward, fast backward) on the suite's
# training problems, then the peers (FlexAttention Triton, SDPA's FA2 and cuDNN) on a subset, one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/w5}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_w5
ALL=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128
timeout 240 ./flexjit bench --suite suite.json --only $ALL > $r/flexjit.jsonl 2> $r/flexjit.err
echo "flexjit rc=$? $(( $(date +%s) - t0 )) s"
SUB=noop_d128,causal_d128,noop_d64,document_causal_d128,sliding_window_d128,alibi_causal_d128,gqa_causal_d128
timeout 330 python3 peers.py --suite suite.json --only $SUB > $r/peers.jsonl 2> $r/peers.err
echo "peers rc=$? $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys
r = sys.argv[1]
rows = {}
for f in ("flexjit.jsonl", "peers.jsonl"):
    for line in open(f"{r}/{f}"):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o: continue
        rows.setdefault(o["name"], {})[o["system"]] = o
for n, d in rows.items():
    print(n, " ".join(f"{s}={o.get('fwd_tflops')}/{o.get('bwd_tflops')}" for s, o in d.items()))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf w5.tar.gz r && rm -rf r
