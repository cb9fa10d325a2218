#!/usr/bin/env bash
# Session (za) za4: the deferred dQ with warpgroup 1 started behind and no P == 0 select (tCD)
# with four dSᵀ tiles (flexjit: STAGES + 1) or three announced after the dQ (flexjit_f), at three
# and two stages, against main's binary (also at two stages); then the select alone (tC) on the
# unmasked d128 and d256 problems. Two interleaved rounds each, fast backward TF/s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/za4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
P=noop_d64,causal_d64,gqa_causal_d64,sliding_window_d64,document_causal_d64,alibi_causal_d64,softcap_causal_d64,prefix_lm_d64
VS="base base_s2 n4 f3 n_s2"
run() {  # variant suite problems jsonl
  local v=$1 suite=$2 only=$3 j=$4 bin=./flexjit td=$PWD/tCD cfg=""
  case $v in base) bin=./flexjit_base; td="";; base_s2) bin=./flexjit_base; td=""; cfg=m64n128w8s2ws;;
    f3) bin=./flexjit_f;; n_s2) cfg=m64n128w8s2ws;; tC) td=$PWD/tC;; esac
  FLEXJIT_TEMPLATE_DIR=$td FLEXJIT_CACHE_DIR=/tmp/fc_ab timeout 100 $bin bench --suite $suite --only $only ${cfg:+--dkdv-config $cfg} --json $j > ${j%.jsonl}.log 2>&1 || tail -2 ${j%.jsonl}.log
}
for round in 1 2; do
  vs="$VS"; [ $round = 2 ] && vs=$(echo $VS | tr ' ' '\n' | tac | tr '\n' ' ')
  for v in $vs; do run $v suite64x.json $P $r/${v}_$round.jsonl; echo "$v $round $(( $(date +%s) - t0 )) s"; done
done
for round in 1 2; do
  vs="base tC"; [ $round = 2 ] && vs="tC base"
  for v in $vs; do
    run $v suite.json noop_d128 $r/d128_${v}_$round.jsonl; run $v suite256.json noop_d256 $r/d256_${v}_$round.jsonl
    echo "d128/d256 $v $round $(( $(date +%s) - t0 )) s"
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
for n, pre in (("noop_d128", "d128"), ("noop_d256", "d256")):
    a = [load(f"{d}/{pre}_base_{i}.jsonl").get(n, 0) for i in (1, 2)]
    b = [load(f"{d}/{pre}_tC_{i}.jsonl").get(n, 0) for i in (1, 2)]
    print(f"{n:22} base {'/'.join(f'{x:.0f}' for x in a)}  tC {'/'.join(f'{x:.0f}' for x in b)}  {statistics.mean(b)/max(statistics.mean(a),1e-9):.3f}")
PY
cd $out && tar czf za4.tar.gz r && rm -rf r
