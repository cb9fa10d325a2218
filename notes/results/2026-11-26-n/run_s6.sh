#!/usr/bin/env bash
# Session (n) s6: final code. The ws backward tests; the deterministic (ordered) mode at d128 with
# the session's templates against the commit before's (same binary); the suite's defaults beside
# the peers (FlexAttention, FlashAttention-2, cuDNN) in one run.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/s6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 150 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeSumsDqInOrder' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
only=causal_d128,alibi_causal_d128,softcap_causal_d128,gqa_causal_d128
for round in 1 2; do
  FLEXJIT_TEMPLATE_DIR=$PWD/oldtmpl timeout 100 ./flexjit bench --suite suite.json --only $only --bwd-mode deterministic --json $r/det_old_$round.jsonl > $r/det_old_$round.log 2>&1 || tail -3 $r/det_old_$round.log
  timeout 100 ./flexjit bench --suite suite.json --only $only --bwd-mode deterministic --json $r/det_new_$round.jsonl > $r/det_new_$round.log 2>&1 || tail -3 $r/det_new_$round.log
done
python3 - $r <<'PY' | tee $r/summary_det.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out[j["name"]] = j
    return out
runs = {k: [load(f"{d}/det_{k}_{i}.jsonl") for i in (1, 2)] for k in ("old", "new")}
for n in runs["new"][0]:
    a = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["old"]]
    b = [x.get(n, {}).get("bwd_tflops", 0) for x in runs["new"]]
    print(f"{n:24} det bwd old {a[0]:4.0f} / {a[1]:4.0f}  new {b[0]:4.0f} / {b[1]:4.0f}  x {sum(b)/max(sum(a),1):.3f} ({runs['new'][0].get(n,{}).get('bwd_mode','')})")
PY
train=noop_d128,causal_d128,noop_d64,causal_d64,causal_d256,gqa_causal_d128,long_causal_d128,sliding_window_d128,document_causal_d128,document_nested_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,long_document_causal_d128
timeout 120 ./flexjit bench --suite suite.json --only "$train" --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 120 ./flexjit bench --suite suite.json --only "$train" --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 300 python3 peers.py --suite suite.json --only "$train" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "name" in j: out.setdefault(j["name"], {})[j.get("system", "flexjit")] = j
    return out
fast, det, peers = load(d + "/flexjit.jsonl"), load(d + "/flexjit_det.jsonl"), load(d + "/peers.jsonl")
for n in fast:
    f = fast[n]["flexjit"]; t = det.get(n, {}).get("flexjit", {}); p = peers.get(n, {})
    fb, db = f.get("bwd_tflops", 0), t.get("bwd_tflops", 0)
    flex = p.get("flex", {}).get("bwd_tflops") or 0
    ps = " ".join(f"{s}={v.get('fwd_tflops', 0):.0f}/{v.get('bwd_tflops') or 0:.0f}" for s, v in p.items())
    print(f"{n:28} fwd {f.get('fwd_tflops',0):4.0f} bwd {fb:4.0f} det {db:4.0f} ({db/max(fb,1):.2f}x fast, {db/max(flex,1):.2f}x flex) | {ps}")
PY
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
