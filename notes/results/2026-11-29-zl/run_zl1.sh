#!/usr/bin/env bash
# For the next session's first call, prepared in (zk), compiled but not run: the ascending ordered
# sums with a descending tail (branch zl-tail-descending). zk1 showed the ascending sums losing
# where a pair's heaviest kv tiles, launched last, drain the grid (causal d256 0.95x, GQA causal
# 0.74x) and zk5 the same for documents with GQA (8:1 0.91x); the branch keeps the descending
# sums and heavy-first order for the pairs of the last wave (ASCENDING_TAIL_CTAS = 128 units), so
# only the pairs that run beside others ascend. Variants, deterministic backward, tuning off, two
# rounds alternating:
#   flexjit           main (ascending for documents without GQA, every pair)
#   flexjit_tail      the branch, main's rule (documents without GQA, the tail descending)
#   flexjit_tail_all  the branch with rule_everywhere.patch (ascending under every mask and with
#                     GQA, the tail descending)
# on the d128 problems of bench/suite.json, four d64 problems (suite64x.json), suite256.json and
# suite_docgqa.json (documents with GQA). About 400 s. Stage in .gpu/<s>/: the three binaries,
# suite.json, suite64x.json (notes/results/2026-11-26-p/), suite256.json
# (notes/results/2026-11-26-n/), suite_docgqa.json (notes/results/2026-11-29-zk/), this script.
# Then the branch's tests (run_zl2_next.sh) for whichever variant wins. The binaries staged in
# .gpu/next_zl/ (zk) were built before 08bda4e (tables alone descending on main), which no suite
# problem uses; rebuild from the branch (121cc80 or later) and main for an exact A/B:
# branch -> flexjit_tail and gpu_test_attention_tail; branch + rule_everywhere.patch ->
# flexjit_tail_all and gpu_test_attention_tail_all; main -> flexjit.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zl1}; r=/tmp/zl1r/r; mkdir -p $r $out
save() { (cd /tmp/zl1r && tar czf $out/zl1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
D128=document_causal_d128,long_document_causal_d128,document_nested_causal_d128,causal_d128,sliding_window_d128,gqa_causal_d128,prefix_lm_d128,softcap_causal_d128,long_causal_d128
bench() {  # binary tag suite only
  FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 100 ./$1 bench --suite $3 ${4:+--only $4} --bwd-mode deterministic --json $r/b_$2.jsonl > $r/b_$2.log 2>&1
  echo "$2 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2; do
  order="flexjit flexjit_tail flexjit_tail_all"; [ $round = 2 ] && order="flexjit_tail_all flexjit_tail flexjit"
  for bin in $order; do
    bench $bin d128_${bin}_r$round suite.json $D128
    bench $bin d64_${bin}_r$round suite64x.json document_causal_d64,causal_d64,sliding_window_d64
    bench $bin d256_${bin}_r$round suite256.json ""
    bench $bin gqa_${bin}_r$round suite_docgqa.json ""
  done
  save
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    v = re.search(r"b_[a-z0-9]+_(flexjit\w*?)_r\d", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[o["name"]][v].append(round(o["bwd_tflops"], 1))
print("deterministic backward TF/s; ratios of means against main")
for n, d in sorted(rows.items()):
    if d["flexjit"]:
        m = statistics.mean(d["flexjit"])
        cells = " ".join(f"{v[8:] or 'main'} {d[v]} x{statistics.mean(d[v]) / m:.3f}" for v in ("flexjit_tail", "flexjit_tail_all") if d[v])
        print(f"{n:34s} main {d['flexjit']} {cells}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
