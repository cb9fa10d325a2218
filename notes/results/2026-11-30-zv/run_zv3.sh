#!/usr/bin/env bash
# (zv) call 3: the backward's 256-column tiles for head dims 160-192 on sm_90a. A/B: old/flexjit (before
# the rule: 192-column tiles, the dQ kernel's way) against ./flexjit, fast and deterministic, two rounds in
# alternating order; the peers; the changed GPU tests; memcheck on the head-dim backward test.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv3}; r=/tmp/zv3r/r; mkdir -p $r $out
save() { (cd /tmp/zv3r && tar czf $out/zv3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
# Tests first, in parallel processes (they compile while nothing is timed).
i=0
for f in ${TESTS-BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy BwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.HeadDimsAndHalfPrecision \
         BwdGpu.FastModeOnePerHeadDim BwdGpu.OrderedModeOnePerHeadDim SeqLensGpu.*Backward*}; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 300 ./gpu_test_attention --gtest_filter="$f" > $r/test_$i.log 2>&1 &
  i=$((i+1))
done
wait
echo "tests $(( $(date +%s) - t0 )) s"
for f in $r/test_*.log; do echo "$(basename $f) $(grep -m1 'Note: Google Test filter' $f | cut -c 33-90): $(grep -E '^\[  (PASSED|FAILED)  \]' $f | tr '\n' ' ')"; done
grep -h -B2 -A6 'Failure' $r/test_*.log | head -40
save
export FLEXJIT_AUTOTUNE=off
for round in 1 2; do
  for b in old new; do
    bin=./flexjit; [ $b = old ] && bin=./old/flexjit
    for mode in fast deterministic; do
      FLEXJIT_CACHE_DIR=/tmp/fc_$b timeout 100 $bin bench --suite head_dims_192.json --bwd-mode $mode --json $r/${b}_${mode}_$round.jsonl > $r/${b}_${mode}_$round.log 2>&1 || tail -2 $r/${b}_${mode}_$round.log
    done
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
save
export PYTHONUNBUFFERED=1
left=$(( 470 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite head_dims_192.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys, glob, os
r = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d[o["name"]] = o
    return d
rows = {}
for b in ("old", "new"):
    for m in ("fast", "deterministic"):
        for rd in (1, 2):
            for n, o in load(f"{r}/{b}_{m}_{rd}.jsonl").items():
                rows.setdefault(n, {}).setdefault(f"{b} {m}", []).append(o.get("bwd_tflops", 0))
                rows[n].setdefault(f"{b} fwd", []).append(o.get("fwd_tflops", 0))
peers = {}
for line in open(f"{r}/peers.jsonl"):
    if '"name"' in line and "bwd_tflops" in line:
        o = json.loads(line); peers.setdefault(o["name"], {})[o["system"]] = (o["fwd_tflops"], o["bwd_tflops"])
for n, d in rows.items():
    s = " | ".join(f"{k} {'/'.join(f'{x:.0f}' for x in v)}" for k, v in d.items() if "fwd" not in k)
    print(f"{n:22s} {s} | peers {peers.get(n, {})}")
PY
save
left=$(( 575 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/ft_1 timeout $left compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd --error-exitcode 9 ./gpu_test_attention --gtest_filter=BwdGpu.FastModeFallsBackOnlyWhereItMustAndSaysWhy > $r/memcheck.log 2>&1; echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/memcheck.log | tr '\n' ' ')"
echo "total $(( $(date +%s) - t0 )) s"
save
