#!/usr/bin/env bash
# Session (zm), second call: more chains of ordered dQ turns where the rule takes two (head dim
# 256's column slices, no mask, long documents). FLEXJIT_EXP_CHAINS=N (experiment build, branch
# zm-chains-exp) replaces 2 with N in codegen::ordered_dq_chains. Deterministic backward, tuning
# off, two rounds alternating; then the ordered GPU tests with 4 chains.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zm2}; r=/tmp/zm2r/r; mkdir -p $r $out
save() { (cd /tmp/zm2r && tar czf $out/zm2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
run() {  # chains
  local c=$1
  for s in "suite256.json noop_d256,causal_d256,softcap_causal_d256,alibi_causal_d256,document_causal_d256" \
           "suite.json noop_d128,long_document_causal_d128" "suite64x.json noop_d64"; do
    set -- $s
    [ $(( $(date +%s) - t0 )) -gt 300 ] && return
    FLEXJIT_EXP_CHAINS=$c FLEXJIT_CACHE_DIR=/tmp/fc_c$c timeout 90 ./flexjit bench --suite $1 --only $2 \
      --bwd-mode deterministic --json $r/b_c${c}_${1%.json}_r$round.jsonl >> $r/b_c$c.log 2>&1
    echo "c$c $1 r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
}
for round in 1 2; do
  order="2 4 8"; [ $round = 2 ] && order="8 4 2"
  for c in $order; do run $c; done
  save
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_c*.jsonl")):
    v = re.search(r"b_c(\d+)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("deterministic backward TF/s by chains; ratios of means against 2")
for n, d in sorted(rows.items()):
    if d["2"]:
        m = statistics.mean(d["2"])
        print(f"{n:30s} c2 {d['2']} " + " ".join(f"c{v} {d[v]} x{statistics.mean(d[v]) / m:.3f}" for v in ("4", "8") if d[v]))
PY
echo "bench $(( $(date +%s) - t0 )) s"; save
run_tests() {  # tag chains filter
  FLEXJIT_EXP_CHAINS=$2 FLEXJIT_CACHE_DIR=/tmp/fc_t$1 timeout 200 ./gpu_test_attention --gtest_filter="$3" > $r/tests_$1.txt 2>&1
}
run_tests a 4 'BwdGpu.Ordered*:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' &
run_tests b 4 'BwdGpu.DeterministicModeSumsDqInOrder:BwdGpu.FastAndDeterministicModes:BwdGpu.SuiteMods' &
wait
for f in $r/tests_*.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
grep -h -B2 -A12 "Failure" $r/tests_*.txt | head -40
echo "$(( $(date +%s) - t0 )) s"
save
