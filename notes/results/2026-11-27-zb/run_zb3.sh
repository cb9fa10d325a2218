#!/usr/bin/env bash
# Session (zb) zb3: the backward's per-CTA cost. B x S constant (so the memset, preprocess and
# convert kernels move the same bytes and the dK/dV grid has the same 2048 CTAs), S from 4096 down
# to 512: each CTA walks S / 64 query tiles. Main's binary, two rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_zb3
t0=$(date +%s)
for round in 1 2; do
  timeout 200 ./flexjit_base bench --suite suite_sweep.json --json $r/sweep_$round.jsonl > $r/sweep_$round.log 2>&1 || tail -3 $r/sweep_$round.log
  echo "round $round $(( $(date +%s) - t0 )) s"
done
for p in noop_d128_s4096 noop_d128_s1024 causal_d128_s4096; do
timeout 100 ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --kernel-name regex:'bwd' --launch-skip 12 --launch-count 6 --csv ./flexjit_base bench --suite suite_sweep.json --only $p > $r/ncu_$p.csv 2> $r/ncu_$p.err
echo "$p $(grep -E 'gpu__time_duration' $r/ncu_$p.csv | awk -F'","' '{print $5, $NF}' | sort | uniq | tr '\n' ' ')"
done
python3 - $r <<'PY'
import json, sys
r = sys.argv[1]
for i in (1, 2):
    for l in open(f"{r}/sweep_{i}.jsonl"):
        try: o = json.loads(l)
        except Exception: continue
        if "name" in o: print(i, o["name"], o["fwd_ms"], o["bwd_ms"], round(o["bwd_tflops"]))
PY
cd $out && tar czf zb3.tar.gz r && rm -rf r
