#!/usr/bin/env bash
# For the next session's first call, prepared in (zl), not run: the size of the descending tail
# (ASCENDING_TAIL_CTAS) and whether a larger one lets GQA under masks with tile bounds, and at
# head dim 256, ascend too. zl1: with a tail of 128 units, GQA 4:1 causal d128 lost 13 % and d256
# 10 % ascending; a GQA unit walks every head of its group, so its heaviest tiles drain longer
# than one wave of 128 units covers. Variants, deterministic backward, tuning off, two rounds
# alternating:
#   main       flexjit (main f7be274 or later: the kept rule, tail 128)
#   main_t256  flexjit, tail 256 (templates tpl_256): the rows that ascend on main
#   all_t128   flexjit_all (branch zm-tail-size: ascending under every mask_mod, GQA and d256
#              included), tail 128 (tpl_128; = zl1's tail_all but for tables alone)
#   all_t256   flexjit_all, tail 256
#   all_t384   flexjit_all, tail 384
# Stage in .gpu/<s>/: flexjit (main), flexjit_all (branch), tpl_128, tpl_256, tpl_384 (copies of
# templates/ with ASCENDING_TAIL_CTAS set; see the sed in the zl closing note), suite.json,
# suite64x.json, suite256.json, suite_docgqa.json, this script. About 450 s.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zm1}; r=/tmp/zm1r/r; mkdir -p $r $out
save() { (cd /tmp/zm1r && tar czf $out/zm1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
run() {  # variant binary template-dir
  local tag=$1 bin=$2 tpl=$3
  for s in "suite.json causal_d128,gqa_causal_d128,long_causal_d128,document_causal_d128" \
           "suite64x.json causal_d64,gqa_causal_d64" "suite256.json causal_d256,gqa_causal_d256" \
           "suite_docgqa.json document_causal_gqa4_d128,document_causal_gqa8_d128,document_causal_gqa4_d256"; do
    set -- $s
    [ $(( $(date +%s) - t0 )) -gt 540 ] && return
    FLEXJIT_TEMPLATE_DIR=${tpl:+$PWD/$tpl} FLEXJIT_CACHE_DIR=/tmp/fc_$tag timeout 60 ./$bin bench --suite $1 --only $2 \
      --bwd-mode deterministic --json $r/b_${tag}_${1%.json}_r$round.jsonl >> $r/b_${tag}.log 2>&1
    echo "$tag $1 r$round rc=$? $(( $(date +%s) - t0 )) s"
  done
}
for round in 1 2; do
  order="main main_t256 all_t128 all_t256 all_t384"; [ $round = 2 ] && order="all_t384 all_t256 all_t128 main_t256 main"
  for v in $order; do
    case $v in
      main) run main flexjit "" ;;
      main_t256) run main_t256 flexjit tpl_256 ;;
      all_t128) run all_t128 flexjit_all tpl_128 ;;
      all_t256) run all_t256 flexjit_all tpl_256 ;;
      all_t384) run all_t384 flexjit_all tpl_384 ;;
    esac
  done
  save
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_(main_t256|main|all_t\d+)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("deterministic backward TF/s; ratios of means against main")
for n, d in sorted(rows.items()):
    if d["main"]:
        m = statistics.mean(d["main"])
        cells = " ".join(f"{v} x{statistics.mean(d[v]) / m:.3f}" for v in ("main_t256", "all_t128", "all_t256", "all_t384") if d[v])
        print(f"{n:30s} main {d['main']} {cells}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
