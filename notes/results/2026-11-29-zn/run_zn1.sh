#!/usr/bin/env bash
# For the next session's first call, prepared in (zm), not run: what the turns of the ordered dQ
# sums still cost, by head dim (timing only; the sums then run in any order). Variants, tuning
# off, two rounds alternating:
#   main      flexjit (main 2787e52 or later), deterministic backward
#   nowait    templates tpl_nowait: wait_for_turn returns at once (zh2's method)
#   nocomp    templates tpl_nowait_nocomplete: no turns, and no wait for the adds' completion
#             before the counter's release (the round trip each writer pays per tile)
# and main's fast backward on the same rows (one round), for the gap to close. If nowait is
# close to the fast mode at d256, the turns are the gap (chain length, the hand-over); if not,
# the ordered slices' own form is. Stage in .gpu/<s>/: flexjit, tpl_nowait, tpl_nowait_nocomplete,
# suite.json, suite256.json, suite64x.json, this script. About 250 s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zn1}; r=/tmp/zn1r/r; mkdir -p $r $out
save() { (cd /tmp/zn1r && tar czf $out/zn1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
run() {  # tag template-dir mode
  local tag=$1 tpl=$2 mode=$3
  for s in "suite256.json noop_d256,causal_d256,softcap_causal_d256,document_causal_d256,gqa_causal_d256" \
           "suite.json causal_d128,noop_d128,document_causal_d128,long_document_causal_d128" "suite64x.json causal_d64,noop_d64"; do
    set -- $s
    [ $(( $(date +%s) - t0 )) -gt 480 ] && return
    FLEXJIT_TEMPLATE_DIR=${tpl:+$PWD/$tpl} FLEXJIT_CACHE_DIR=/tmp/fc_$tag timeout 90 ./flexjit bench --suite $1 --only $2 \
      --bwd-mode $mode --json $r/b_${tag}_${1%.json}_r$round.jsonl >> $r/b_${tag}.log 2>&1
    echo "$tag $1 r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
}
round=1; run fast "" fast
for round in 1 2; do
  order="main nowait nocomp"; [ $round = 2 ] && order="nocomp nowait main"
  for v in $order; do
    case $v in
      main) run main "" deterministic ;;
      nowait) run nowait tpl_nowait deterministic ;;
      nocomp) run nocomp tpl_nowait_nocomplete deterministic ;;
    esac
  done
  save
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_(fast|main|nowait|nocomp)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("backward TF/s: fast, deterministic main, and the timing-only variants (ratios of means to main)")
for n, d in sorted(rows.items()):
    if d["main"]:
        m = statistics.mean(d["main"])
        cells = " ".join(f"{v} {d[v]} x{statistics.mean(d[v]) / m:.3f}" for v in ("fast", "nowait", "nocomp") if d[v])
        print(f"{n:30s} main {d['main']} {cells}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
