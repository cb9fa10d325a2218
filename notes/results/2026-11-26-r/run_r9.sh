#!/usr/bin/env bash
# Session (r) r9: the landing forward (afc6d8f: the tile slot read by lane 0) and the previous
# binary (47c817e) beside every peer, FA4 and the FLASH backend included (.fa4a copied by the
# call before, this one carrying .fa4b); forward only (the change is the forward's); then
# compute-sanitizer memcheck, racecheck and synccheck on one ws forward per head dim.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/r9}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
(cd ../.. && timeout 150 bash .fa4b/install.sh) > $r/install.log 2>&1; echo "install rc=$? $(( $(date +%s) - t0 )) s: $(tail -1 $r/install.log)"
only=noop_d128,causal_d128,noop_d64,causal_d64,gqa_causal_d128,alibi_causal_d128,softcap_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,long_causal_d128
only256=noop_d256,causal_d256,alibi_causal_d256,gqa_causal_d256
for v in new prev; do
  bin=./flexjit; [ $v = prev ] && bin=./flexjit_prev
  export FLEXJIT_CACHE_DIR=/tmp/fc_$v
  timeout 120 $bin bench --suite suite.json --only $only --no-bwd --json $r/$v.jsonl > $r/$v.log 2>&1 || tail -3 $r/$v.log
  timeout 60 $bin bench --suite suite256x.json --only $only256 --no-bwd --json $r/${v}256.jsonl > $r/${v}256.log 2>&1 || tail -3 $r/${v}256.log
done
echo "flexjit $(( $(date +%s) - t0 )) s"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages
PYTHONUNBUFFERED=1 timeout 240 python3 peers.py --flash --no-bwd --suite suite.json --only "$only" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 100 python3 peers.py --flash --no-bwd --suite suite256x.json --only "$only256" > $r/peers256.jsonl 2> $r/peers256.err || tail -3 $r/peers256.err
echo "peers256 $(( $(date +%s) - t0 )) s"
python3 compare.py $r/new.jsonl $r/peers.jsonl > $r/compare.txt 2>&1
python3 compare.py $r/new256.jsonl $r/peers256.jsonl > $r/compare256.txt 2>&1
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
    new = load(f"{d}/new{suf}.jsonl"); prev = load(f"{d}/prev{suf}.jsonl"); peers = load(f"{d}/peers{suf}.jsonl")
    systems = sorted({s for n in peers for s in peers[n]})
    print(f"{'problem':26} {'new':>6} {'prev':>6} " + " ".join(f"{s[:14]:>14}" for s in systems))
    for n in new:
        f = lambda x: x.get("fwd_tflops") or 0
        row = [f"{f(new[n]['flexjit']):6.0f}", f"{f(prev.get(n, {}).get('flexjit', {})):6.0f}"]
        row += [f"{f(peers.get(n, {}).get(s, {})):14.0f}" for s in systems]
        print(f"{n:26} " + " ".join(row))
PY
export FLEXJIT_CACHE_DIR=/tmp/fc_new
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedOnePerHeadDim' > $r/san_$tool.txt 2>&1; echo "$tool rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$tool.txt | tr '\n' ' ')"
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
