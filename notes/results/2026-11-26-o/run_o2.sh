#!/usr/bin/env bash
# Session (o) o2: the ws dK/dV kernel's launch order under masks: heavy kv tiles first within
# groups of (kv head, batch) pairs of about 128 CTAs (new) against the plain order (the commit
# before's templates through FLEXJIT_TEMPLATE_DIR, same binary); fast and deterministic, two
# rounds, interleaved. Then the ws backward tests.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/o2}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
only=noop_d128,causal_d128,causal_d64,gqa_causal_d128,long_causal_d128,sliding_window_d128,document_causal_d128,prefix_lm_d128,alibi_causal_d128,softcap_causal_d128,long_document_causal_d128
only256=causal_d256,alibi_causal_d256,document_causal_d256
for round in 1 2; do
  for mode in fast deterministic; do
    FLEXJIT_TEMPLATE_DIR=$PWD/oldtmpl timeout 150 ./flexjit bench --suite suite.json --only $only --bwd-mode $mode --json $r/old_${mode}_$round.jsonl > $r/old_${mode}_$round.log 2>&1 || tail -3 $r/old_${mode}_$round.log
    timeout 150 ./flexjit bench --suite suite.json --only $only --bwd-mode $mode --json $r/new_${mode}_$round.jsonl > $r/new_${mode}_$round.log 2>&1 || tail -3 $r/new_${mode}_$round.log
    FLEXJIT_TEMPLATE_DIR=$PWD/oldtmpl timeout 100 ./flexjit bench --suite suite256.json --only $only256 --bwd-mode $mode --json $r/old256_${mode}_$round.jsonl > $r/old256_${mode}_$round.log 2>&1 || tail -3 $r/old256_${mode}_$round.log
    timeout 100 ./flexjit bench --suite suite256.json --only $only256 --bwd-mode $mode --json $r/new256_${mode}_$round.jsonl > $r/new256_${mode}_$round.log 2>&1 || tail -3 $r/new256_${mode}_$round.log
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
for mode in ("fast", "deterministic"):
    for pre in ("", "256"):
        runs = {k: [load(f"{d}/{k}{pre}_{mode}_{i}.jsonl") for i in (1, 2)] for k in ("old", "new")}
        for n in runs["new"][0]:
            a = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs["old"]]
            b = [x.get(n, {}).get("bwd_tflops") or 0 for x in runs["new"]]
            print(f"{mode:13} {n:26} bwd plain {a[0]:4.0f} / {a[1]:4.0f}  grouped {b[0]:4.0f} / {b[1]:4.0f}  x {sum(b)/max(sum(a),1):.3f}")
PY
timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.DeterministicModeSumsDqInOrder' > $r/t.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t.txt | tr '\n' ' ')"
grep -B2 -A8 Failure $r/t.txt | head -30
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
