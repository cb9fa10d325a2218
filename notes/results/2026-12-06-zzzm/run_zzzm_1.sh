#!/usr/bin/env bash
# (zzzm) call 1 (carry .fa4b and .gpu/zzzm; after a call that copied .fa4a to /tmp/fa4a):
# main 4ea16f7's GPU checks owed by (zzzl), then main beside every peer (FA4 and FLASH included)
# on the issue's suite on an H100.
#  1. racecheck of BwdGpu.DiagonalTableOnePerHeadDim one kernel at a time (zzzl's 8 reports: which
#     kernel holds the two wgmma reads?), and the SeqLensGpu.ScoreDiagonal* tests never run;
#  2. flexjit forward + fast backward, peers.py --flash, flexjit again, deterministic backward.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzm1}; r=/tmp/zzzm1r/r; mkdir -p $r $out
save() { (cd /tmp/zzzm1r && tar czf $out/zzzm1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
( cd ../.. && timeout 200 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1 &
inst=$!
export FLEXJIT_AUTOTUNE=off
for k in attention_fwd attention_bwd_dkdv; do
  (FLEXJIT_CACHE_DIR=/tmp/fjr_$k timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 30 \
     --kernel-name kns=$k ./gta --gtest_filter='BwdGpu.DiagonalTableOnePerHeadDim' > $r/race_$k.txt 2>&1) &
done
FLEXJIT_CACHE_DIR=/tmp/fj3 timeout 90 ./gta --gtest_filter='SeqLensGpu.ScoreDiagonal*' > $r/tests_seqlens.txt 2>&1
wait $(jobs -p | grep -v "^$inst$") 2>/dev/null
for k in attention_fwd attention_bwd_dkdv; do
  echo "$k: $(grep -h 'RACECHECK SUMMARY' $r/race_$k.txt)"
  grep -A1 "Error: Race" $r/race_$k.txt | grep "and Read" | sed 's/+0x[0-9a-f]*.*//; s/.*Read access at //' | cut -c1-90 | sort | uniq -c
done
grep -hE "^\[ +(OK|FAILED) |Failure" $r/tests_seqlens.txt | head
echo "checks $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_CACHE_DIR=/tmp/fc_b
timeout 120 ./flexjit bench --suite suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit fast $(( $(date +%s) - t0 )) s"
save
wait $inst; echo "install: $(tail -1 $r/install.txt)"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 470 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
left=$(( 525 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && timeout $left ./flexjit bench --suite suite.json --json $r/flexjit_r2.jsonl > $r/flexjit_r2.log 2>&1
echo "flexjit again $(( $(date +%s) - t0 )) s"
left=$(( 575 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && timeout $left ./flexjit bench --bwd-mode deterministic --suite suite.json --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1
echo "flexjit deterministic $(( $(date +%s) - t0 )) s"
python3 - $r <<'PY'
import json, sys, os
r = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d[o["name"]] = o
    return d
fast, again, det = load(f"{r}/flexjit.jsonl"), load(f"{r}/flexjit_r2.jsonl"), load(f"{r}/flexjit_det.jsonl")
peers = {}
if os.path.exists(f"{r}/peers.jsonl"):
    for line in open(f"{r}/peers.jsonl"):
        if line.startswith("{") and '"name"' in line:
            o = json.loads(line); peers.setdefault(o["name"], {})[o["system"]] = o
for n, o in fast.items():
    a = again.get(n, {})
    ps = " ".join(f"{s} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}" for s, v in sorted(peers.get(n, {}).items()))
    print(f"{n:28s} fwd {o.get('fwd_tflops', 0):6.1f} / {a.get('fwd_tflops', 0):6.1f}  fast {o.get('bwd_tflops', 0):6.1f} / {a.get('bwd_tflops', 0):6.1f}  det {det.get(n, {}).get('bwd_tflops', 0):6.1f} | {ps}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
