#!/usr/bin/env bash
# Session (z) z8, HEAD b1183a3's build beside the peers, one run: flexjit (forward, fast backward)
# on the suite's training problems and the d64 masked ones, then SDPA (FA2, cuDNN) and
# FlexAttention (Triton) on the dense problems and causal d256, FlexAttention alone on the masked ones.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/z8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_z8
ALL=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,gqa_causal_d128,long_causal_d128,long_document_causal_d128
timeout 200 ./flexjit bench --suite suite_repo.json --only $ALL > $r/flexjit.jsonl 2> $r/flexjit.err
timeout 80 ./flexjit bench --suite suite64x.json --only sliding_window_d64,document_causal_d64,prefix_lm_d64,softcap_causal_d64 >> $r/flexjit.jsonl 2>> $r/flexjit.err
echo "flexjit $(( $(date +%s) - t0 )) s"
timeout 220 python3 peers.py --suite suite_repo.json --only noop_d128,causal_d128,noop_d64,gqa_causal_d128,causal_d256 > $r/peers.jsonl 2> $r/peers.err
echo "peers sdpa $(( $(date +%s) - t0 )) s"
left=$(( 570 - ($(date +%s) - t0) ))
[ $left -gt 30 ] && timeout $left python3 peers.py --no-sdpa --suite suite_repo.json --only document_causal_d128,sliding_window_d128,alibi_causal_d128,softcap_causal_d128,prefix_lm_d128 >> $r/peers.jsonl 2>> $r/peers.err
echo "peers flex $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY' | tee $r/summary.txt
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
cd $out && tar czf z8.tar.gz r && rm -rf r
