#!/usr/bin/env bash
# Session (za) za3: the deferred dQ (tA) with warpgroup 1 started behind warpgroup 0 (tD: once 0
# issued its first dV; tE: once 0 issued its first Sᵀ/dPᵀ; tCD: tD + no P == 0 select without
# masks), against main's binary. Two interleaved benchmark rounds (fast backward TF/s, d64 suite),
# then ncu (duration, tensor pipe, issue slots) of the dK/dV kernel per variant.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/za3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
P=noop_d64,causal_d64,gqa_causal_d64,sliding_window_d64,document_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64
VS="base tA tC tD tE tCD"
for round in 1 2; do
  vs="$VS"; [ $round = 2 ] && vs=$(echo $VS | tr ' ' '\n' | tac | tr '\n' ' ')
  for v in $vs; do
    if [ $v = base ]; then bin=./flexjit_base; td=""; else bin=./flexjit; td=$PWD/$v; fi
    FLEXJIT_TEMPLATE_DIR=$td FLEXJIT_CACHE_DIR=/tmp/fc_ab timeout 100 $bin bench --suite suite64x.json --only $P --json $r/${v}_$round.jsonl > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    echo "$v $round $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r "$VS" <<'PY' | tee $r/summary.txt
import json, sys, statistics, math
d = sys.argv[1]; vs = sys.argv[2].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j.get("bwd_tflops", 0)
    except OSError: pass
    return out
names = ["noop_d64","causal_d64","gqa_causal_d64","sliding_window_d64","document_causal_d64","alibi_causal_d64","softcap_causal_d64","prefix_lm_d64"]
print(f"{'problem':22}" + "".join(f"{v:>14}" for v in vs))
geo = {v: [] for v in vs}
for n in names:
    row = {v: [load(f"{d}/{v}_{i}.jsonl").get(n, 0) for i in (1, 2)] for v in vs}
    b = statistics.mean(row["base"]) or 1
    for v in vs: geo[v].append(max(statistics.mean(row[v]), 1e-9) / b)
    print(f"{n:22}" + "".join(f"{'/'.join(f'{x:.0f}' for x in row[v]):>9} {statistics.mean(row[v])/b:.3f}" for v in vs))
print(f"{'geomean':22}" + "".join(f"{math.exp(sum(map(math.log, geo[v]))/len(geo[v])):>14.3f}" for v in vs))
PY
for p in noop_d64 alibi_causal_d64; do
  for v in base tA tD tE; do
    if [ $v = base ]; then bin=./flexjit_base; td=""; else bin=./flexjit; td=$PWD/$v; fi
    FLEXJIT_TEMPLATE_DIR=$td FLEXJIT_CACHE_DIR=/tmp/fc_ab timeout 60 ncu --kernel-name regex:'bwd_dkdv$' --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis $bin bench --suite suite64x.json --only $p > $r/ncu_${p}_$v.log 2>&1
    echo "$p $v $(grep -E '^ +Duration|Tensor \(All\)|Issue Slots Busy' $r/ncu_${p}_$v.log | awk '{print $1, $(NF-1), $NF}' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  done
done
cd $out && tar czf za3.tar.gz r && rm -rf r
