#!/bin/bash
# (zzzl) call 2 (carry .gpu/zzzl; about 330 s): racecheck per kernel of call 1's sanitizer test;
# the one test call 1 ran out of time for;
# the backward A/B main / seed / seed64 (the seed at head dim 64 only) on table_bwd.json, 2 rounds;
# compute-sanitizer memcheck of small table-form calls (forward and backward); then the branch
# beside FlexAttention and SDPA's cuDNN / FA2 (peers.py, no --flash) on three rows of the
# diagonal-table peer suite (peer_mini.json), flexjit before and after the peers.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzl2}; mkdir -p $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
# racecheck per kernel (call 1's 8 reports, all against bulk copies: which kernel's are the wgmma reads?)
for k in attention_fwd attention_bwd_dkdv; do
  (FLEXJIT_CACHE_DIR=/tmp/fjr_$k timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 30 \
     --kernel-name kns=$k ./gta --gtest_filter='BwdGpu.DiagonalTableOnePerHeadDim' > $out/race_$k.txt 2>&1) &
done
FLEXJIT_CACHE_DIR=/tmp/fj3 timeout 60 ./gta --gtest_filter='SeqLensGpu.ScoreDiagonal*' > $out/tests_c.txt 2>&1
wait
for k in attention_fwd attention_bwd_dkdv; do
  echo "$k: $(grep -h 'RACECHECK SUMMARY' $out/race_$k.txt)"
  grep -A1 "Error: Race" $out/race_$k.txt | grep "and Read" | sed 's/+0x[0-9a-f]*.*//; s/.*Read access at //' | cut -c1-90 | sort | uniq -c
done
grep -hE "^\[ +(OK|FAILED) |Failure" $out/tests_c.txt | head
echo "test $(( $(date +%s) - t0 )) s"
OUT=$out bash ab2.sh bwd2 table_bwd.json bwd_ms 90 2 "" main:./flexjit_main:: seed:./flexjit:: seed64:./flexjit_seed64:: 2>&1 | grep -v "^bwd2 "
FLEXJIT_CACHE_DIR=/tmp/fjm timeout 90 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 9 \
  ./flexjit bench --suite memcheck_small.json > $out/memcheck.txt 2>&1
echo "memcheck rc=$? $(( $(date +%s) - t0 )) s"; grep -hE "ERROR SUMMARY|t5_small|relh_small" $out/memcheck.txt | head -5
r=$out/peers; mkdir -p $r
export FLEXJIT_CACHE_DIR=/tmp/fc_p PYTHONUNBUFFERED=1
timeout 60 ./flexjit bench --suite peer_mini.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1
timeout 150 python3 peers.py --suite peer_mini.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
timeout 60 ./flexjit bench --suite peer_mini.json --json $r/flexjit_r2.jsonl > $r/flexjit_r2.log 2>&1
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
fast, again = load(f"{r}/flexjit.jsonl"), load(f"{r}/flexjit_r2.jsonl")
peers = {}
if os.path.exists(f"{r}/peers.jsonl"):
    for line in open(f"{r}/peers.jsonl"):
        if line.startswith("{") and '"name"' in line:
            o = json.loads(line); peers.setdefault(o["name"], {})[o["system"]] = o
for n, o in fast.items():
    a = again.get(n, {})
    ps = " ".join(f"{s} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}" for s, v in sorted(peers.get(n, {}).items()))
    print(f"{n:24s} fwd {o.get('fwd_tflops', 0):6.1f} / {a.get('fwd_tflops', 0):6.1f}  bwd {o.get('bwd_tflops', 0):6.1f} / {a.get('bwd_tflops', 0):6.1f} | {ps}")
PY
echo "all done $(( $(date +%s) - t0 )) s"
