#!/usr/bin/env bash
# Session (w) w4, main at 16972f6 (forward column values): 1) the new forward tests on this
# build; 2) flexjit (fast backward) beside FlexAttention (Triton) on the buffer-reading masked
# problems and the d64 masked ones, one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/w4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_w4t timeout 120 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedMaskColumnValues*' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -20
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_w4b
P128=document_causal_d128,document_nested_causal_d128,long_document_causal_d128,alibi_causal_d128,sliding_window_d128,prefix_lm_d128
P64=document_causal_d64,sliding_window_d64,causal_d64,prefix_lm_d64
timeout 150 ./flexjit bench --suite suite.json --only $P128 > $r/flexjit.jsonl 2> $r/flexjit.err
timeout 90 ./flexjit bench --suite suite64x.json --only $P64 >> $r/flexjit.jsonl 2>> $r/flexjit.err
echo "flexjit done $(( $(date +%s) - t0 )) s"
timeout 300 python3 peers.py --suite suite.json --only $P128 --no-sdpa > $r/peers.jsonl 2> $r/peers.err
timeout 150 python3 peers.py --suite suite64x.json --only $P64 --no-sdpa >> $r/peers.jsonl 2>> $r/peers.err
echo "peers done $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys
r = sys.argv[1]
rows = {}
for f in ("flexjit.jsonl", "peers.jsonl"):
    for line in open(f"{r}/{f}"):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        rows.setdefault(o["name"], {})[o["system"]] = o
for n, d in rows.items():
    fj, fx = d.get("flexjit", {}), d.get("flex", {})
    def ratio(k):
        a, b = fj.get(k), fx.get(k)
        return f"{a / b:.2f}" if a and b else "-"
    print(f"{n}: flexjit {fj.get('fwd_tflops')} / {fj.get('bwd_tflops')}  flex {fx.get('fwd_tflops')} / {fx.get('bwd_tflops')}  x fwd {ratio('fwd_tflops')} x bwd {ratio('bwd_tflops')}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf w4.tar.gz r && rm -rf r
