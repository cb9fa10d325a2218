#!/usr/bin/env bash
# Session (zi), fourth call. 1. The deterministic backward at head dim 256 (0.53x the fast mode in
# zi3, causal d256 222 against 421 TF/s): the ordered sums against the separate dQ kernel
# (FLEXJIT_DETERMINISTIC_DQ), two rounds alternating, tuning off, suite256.json
# (notes/results/2026-11-26-n). 2. compute-sanitizer racecheck on OrderedModeOnePerHeadDim with
# main 4de3b33's name barriers (gpu_test_attention of 4de3b33's build plus the error-words fix).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zi4}; r=/tmp/zi4r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
way() {  # way round
  FLEXJIT_DETERMINISTIC_DQ=$1 FLEXJIT_CACHE_DIR=/tmp/fc timeout 100 ./flexjit bench --suite suite256.json --bwd-mode deterministic --json $r/b_$1_r$2.jsonl > $r/b_$1_r$2.log 2>&1
  echo "$1 r$2 rc=$? $(( $(date +%s) - t0 )) s"
}
FLEXJIT_CACHE_DIR=/tmp/fc timeout 100 ./flexjit bench --suite suite256.json --bwd-mode fast --json $r/b_fast.jsonl > $r/b_fast.log 2>&1
way ordered 1; way kernel 1; way kernel 2; way ordered 2
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(ordered|kernel|fast)", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][tag].append((round(o["bwd_tflops"], 1), o.get("bwd_mode")))
for n, d in rows.items():
    print(f"{n:24s} fast {[x[0] for x in d['fast']]} ordered {[x[0] for x in d['ordered']]} kernel {[x[0] for x in d['kernel']]} | {d['kernel'][0][1] if d['kernel'] else ''}")
PY
left=$(( 580 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fc_r timeout $left compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 20 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_racecheck.txt 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED|OK \]' $r/san_racecheck.txt | tr '\n' ' ')"
grep -E "Race reported|Error: Race|hazard" $r/san_racecheck.txt | sort | uniq -c | sort -rn | head -8
grep -E "in .*flexjit_attention_bwd_dkdv|at .*\+0x" $r/san_racecheck.txt | sed 's/0x[0-9a-f]*//g' | sort | uniq -c | sort -rn | head -12
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zi4r && tar czf $out/zi4.tar.gz r
