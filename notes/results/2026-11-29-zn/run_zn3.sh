#!/usr/bin/env bash
# (zn) A/B of the ordered dQ writers' reads: old = main 2787e52 (name, rank and turn after the
# staging); early = name, rank and a first look at the counter before the staging (tpl_early);
# pipe = this build: the next tile's name and rank read while this tile's adds complete, plus
# the early look. Deterministic backward, tuning off, two rounds alternating; fast once (pipe build).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zn3}; r=/tmp/zn3r/r; mkdir -p $r $out
save() { (cd /tmp/zn3r && tar czf $out/zn3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
run() {  # tag binary template-dir mode
  local tag=$1 bin=$2 tpl=$3 mode=$4
  for s in "suite256.json noop_d256,causal_d256,softcap_causal_d256,document_causal_d256,gqa_causal_d256" \
           "suite.json causal_d128,noop_d128,document_causal_d128,long_document_causal_d128,gqa_causal_d128" "suite64x.json causal_d64,noop_d64"; do
    set -- $s
    [ $(( $(date +%s) - t0 )) -gt 500 ] && return
    FLEXJIT_TEMPLATE_DIR=${tpl:+$PWD/$tpl} FLEXJIT_CACHE_DIR=/tmp/fc_$tag timeout 100 ./$bin bench --suite $1 --only $2 \
      --bwd-mode $mode --json $r/b_${tag}_${1%.json}_r$round.jsonl >> $r/b_${tag}.log 2>&1
    echo "$tag $1 r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
}
round=1; run fast flexjit "" fast
for round in 1 2; do
  order="old early pipe"; [ $round = 2 ] && order="pipe early old"
  for v in $order; do
    case $v in
      old) run old flexjit_old "" deterministic ;;
      early) run early flexjit tpl_early deterministic ;;
      pipe) run pipe flexjit "" deterministic ;;
    esac
  done
  save
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_(fast|old|early|pipe)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("backward TF/s, deterministic: old, early, pipe (ratios of means to old); fast (pipe build)")
for n, d in sorted(rows.items()):
    if d["old"]:
        m = statistics.mean(d["old"])
        cells = " ".join(f"{v} {d[v]} x{statistics.mean(d[v]) / m:.3f}" for v in ("early", "pipe", "fast") if d[v])
        print(f"{n:28s} old {d['old']} {cells}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
