#!/usr/bin/env bash
# (zn) final A/B: old = main 2787e52; early = 76d7b80 (tpl_early); cur = this build (consumers read tile names in lane 0 and shuffle, for racecheck)
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zn6}; r=/tmp/zn6r/r; mkdir -p $r $out
save() { (cd /tmp/zn6r && tar czf $out/zn6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
run() {  # tag binary template-dir mode
  local tag=$1 bin=$2 tpl=$3 mode=$4
  for s in "suite256.json noop_d256,causal_d256,softcap_causal_d256,document_causal_d256,gqa_causal_d256" \
           "suite.json causal_d128,noop_d128,document_causal_d128,long_document_causal_d128,gqa_causal_d128" "suite64x.json causal_d64,noop_d64"; do
    set -- $s
    [ $(( $(date +%s) - t0 )) -gt 260 ] && return
    FLEXJIT_TEMPLATE_DIR=${tpl:+$PWD/$tpl} FLEXJIT_CACHE_DIR=/tmp/fc_$tag timeout 100 ./$bin bench --suite $1 --only $2 \
      --bwd-mode $mode --json $r/b_${tag}_${1%.json}_r$round.jsonl >> $r/b_${tag}.log 2>&1
    echo "$tag $1 r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
}
round=1; run fast flexjit "" fast
for round in 1 2; do
  order="old early cur"; [ $round = 2 ] && order="cur early old"
  for v in $order; do
    case $v in
      old) run old flexjit_old "" deterministic ;;
      early) run early flexjit tpl_early deterministic ;;
      cur) run cur flexjit "" deterministic ;;
    esac
  done
  save
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_(fast|old|early|cur)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("backward TF/s, deterministic: old, early, cur (ratios of means to old); fast (cur build)")
for n, d in sorted(rows.items()):
    if d["old"]:
        m = statistics.mean(d["old"])
        cells = " ".join(f"{v} {d[v]} x{statistics.mean(d[v]) / m:.3f}" for v in ("early", "cur", "fast") if d[v])
        print(f"{n:28s} old {d['old']} {cells}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
# then the tests of the consumers' change and racecheck side by side
F='BwdGpu.OrderedModeChainsAtHeadDim256'
FLEXJIT_CACHE_DIR=/tmp/fc_race timeout 200 compute-sanitizer --tool racecheck --kernel-name kns=bwd_dkdv --print-limit 3000 ./gpu_test_attention --gtest_filter=$F > $r/san_racecheck.txt 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.OrderedModeAscendingPairsBesideADescendingTail:BwdGpu.OrderedModeChainsAtHeadDim256' > $r/tests.txt 2>&1 &
wait
for f in $r/san_*.txt $r/tests.txt; do echo "$(basename $f): $(grep -E '^\[  FAILED|^\[  PASSED|ERROR SUMMARY|RACECHECK SUMMARY' $f | tr '\n' ' ') ok=$(grep -c '^\[       OK' $f)"; done
grep -A1 'Error: Race' $r/san_racecheck.txt | sed -E 's/\+0x[0-9a-f]+//g; s/\[[0-9]+ hazards\]//; s/\(.*\) in / in /; s/<[^>]*>//g' | grep -v '^--' | paste - - | sort | uniq -c | sort -rn | head -8
echo "$(( $(date +%s) - t0 )) s"
save
