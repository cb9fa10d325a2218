#!/usr/bin/env bash
# Session (t) t4: main at 4cb658b (t2's ticket claim, t3's Q in registers at d64). Every FwdGpu
# test; compute-sanitizer on one ws forward per head dim; a forward config sweep on the sparse
# masks (documents, sliding window, prefix LM); then the forward beside FlexAttention (Triton),
# cuDNN and FA2 through peers.py (no --flash: FA4's wheels are not on this machine this session).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_CACHE_DIR=/tmp/fct4
timeout 280 ./gpu_test_attention --gtest_filter='FwdGpu.*' > $r/t_fwd.txt 2>&1; echo "FwdGpu.* rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_fwd.txt | tr '\n' ' ') last: $(grep -E '^\[ +(OK|FAILED) ' $r/t_fwd.txt | tail -1)"
grep -B2 -A8 Failure $r/t_fwd.txt | head -20
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
for c in m128n128w8s2ws m128n128w8s3ws m128n64w8s2ws m128n64w8s4ws m64n128w4s2ws m128n128w8s2g; do
  timeout 60 ./flexjit bench --suite suite.json --only document_causal_d128,sliding_window_d128,prefix_lm_d128 --config $c --no-bwd --json $r/cfg_$c.jsonl > $r/cfg_$c.log 2>&1 || tail -2 $r/cfg_$c.log
done
echo "configs $(( $(date +%s) - t0 )) s"
only=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,long_causal_d128,long_document_causal_d128
timeout 100 ./flexjit bench --suite suite.json --only $only --no-bwd --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 60 ./flexjit bench --suite suite64x.json --no-bwd --json $r/flexjit64.jsonl > $r/flexjit64.log 2>&1 || tail -3 $r/flexjit64.log
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 170 python3 peers.py --no-bwd --suite suite.json --only "$only" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 80 python3 peers.py --no-bwd --suite suite64x.json > $r/peers64.jsonl 2> $r/peers64.err || tail -3 $r/peers64.err
echo "peers64 $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1
python3 compare.py $r/flexjit64.jsonl $r/peers64.jsonl > $r/compare64.txt 2>&1
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, os
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
f = lambda x: x.get("fwd_tflops") or 0
print("config sweep (fwd TF/s)")
for c in sorted(glob.glob(f"{d}/cfg_*.jsonl")):
    x = load(c); name = os.path.basename(c)[4:-6]
    print(f"  {name:18} " + " ".join(f"{n}={f(x[n]['flexjit']):.0f}" for n in x))
for a, b in (("flexjit", "peers"), ("flexjit64", "peers64")):
    new = load(f"{d}/{a}.jsonl"); peers = load(f"{d}/{b}.jsonl")
    systems = sorted({s for n in peers for s in peers[n]})
    print(f"{'problem':28} {'flexjit':>8} " + " ".join(f"{s[:16]:>16}" for s in systems))
    for n in new:
        row = [f"{f(new[n]['flexjit']):8.0f}"] + [f"{f(peers.get(n, {}).get(s, {})):16.0f}" for s in systems]
        print(f"{n:28} " + " ".join(row))
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
