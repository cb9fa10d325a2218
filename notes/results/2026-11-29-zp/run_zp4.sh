#!/usr/bin/env bash
# (zp) call 4: main 182495e's landing run on the whole suite (suite.json: the dense, masked,
# d256, learnable and decode rows), flexjit forward + fast backward, then the deterministic
# backward, FLEXJIT_AUTOTUNE=off; then the peers (SDPA cuDNN and FA2, FlexAttention Triton) on the
# same suite, one call. FA4 / FLASH not installed (not enough device time for the two-call
# transfer this session).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zp4}; r=/tmp/zp4r/r; mkdir -p $r $out
save() { (cd /tmp/zp4r && tar czf $out/zp4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 130 ./flexjit bench --suite suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit fast $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 110 ./flexjit bench --suite suite.json --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
echo "flexjit det $(( $(date +%s) - t0 )) s"
save
left=$(( 520 - ($(date +%s) - t0) ))
PYTHONUNBUFFERED=1 timeout $left python3 peers.py --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; tail -80 $r/compare.txt
python3 - $r <<'PY'
import json, sys
r = sys.argv[1]
def load(f):
    d = {}
    for line in open(f):
        if line.startswith("{") and '"name"' in line:
            o = json.loads(line); d[o["name"]] = o
    return d
fast, det = load(f"{r}/flexjit.jsonl"), load(f"{r}/flexjit_det.jsonl")
print("deterministic / fast backward")
for n, o in fast.items():
    if o.get("bwd_tflops") and det.get(n, {}).get("bwd_tflops"):
        print(f"{n:32s} fast {o['bwd_tflops']:7.1f} det {det[n]['bwd_tflops']:7.1f} x{det[n]['bwd_tflops'] / o['bwd_tflops']:.2f}")
PY
save
