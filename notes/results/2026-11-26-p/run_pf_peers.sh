#!/usr/bin/env bash
# Session (p) pf, second call: this session's final code (4f6ed10) beside every peer in one call, FA4 and
# FlexAttention's FLASH backend included (.fa4a copied to /tmp/fa4a by the call before, this one
# carrying .fa4b). flexjit fast and deterministic, then peers.py --flash on the same problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/pfp}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
(cd ../.. && timeout 150 bash .fa4b/install.sh) > $r/install.log 2>&1; echo "install rc=$? $(( $(date +%s) - t0 )) s: $(tail -1 $r/install.log)"
only=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,long_causal_d128
only256=noop_d256,causal_d256,alibi_causal_d256,gqa_causal_d256
timeout 120 ./flexjit bench --suite suite.json --only $only --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 120 ./flexjit bench --suite suite.json --only $only --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
timeout 60 ./flexjit bench --suite suite256x.json --only $only256 --json $r/flexjit256.jsonl > $r/flexjit256.log 2>&1 || tail -3 $r/flexjit256.log
echo "flexjit $(( $(date +%s) - t0 )) s"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages
PYTHONUNBUFFERED=1 timeout 300 python3 peers.py --flash --suite suite.json --only "$only" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 100 python3 peers.py --flash --suite suite256x.json --only "$only256" > $r/peers256.jsonl 2> $r/peers256.err || tail -3 $r/peers256.err
echo "peers256 $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1
python3 compare.py $r/flexjit256.jsonl $r/peers256.jsonl > $r/compare256.txt 2>&1
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j and "error" not in j: out.setdefault(j["name"], {})[j.get("system", "flexjit")] = j
    except FileNotFoundError: pass
    return out
for suf in ("", "256"):
    me = load(f"{d}/flexjit{suf}.jsonl"); det = load(f"{d}/flexjit_det.jsonl") if not suf else {}
    peers = load(f"{d}/peers{suf}.jsonl")
    for n, s in me.items():
        f = s["flexjit"]; dt = det.get(n, {}).get("flexjit", {})
        ps = " ".join(f"{k}={v.get('fwd_tflops', 0):.0f}/{v.get('bwd_tflops') or 0:.0f}" for k, v in peers.get(n, {}).items())
        print(f"{n:24} flexjit {f.get('fwd_tflops', 0):.0f}/{f.get('bwd_tflops') or 0:.0f} det {dt.get('bwd_tflops') or 0:.0f} | {ps}")
PY
grep -h '"error"' $r/peers*.jsonl | head -5
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
