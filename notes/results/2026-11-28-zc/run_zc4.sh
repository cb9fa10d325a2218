#!/usr/bin/env bash
# Session (zc) zc4: the deterministic backward's ordered dQ sums with 1, 2 (main) and 4 chains
# (FLEXJIT_EXP_CHAINS, experiment build), beside the fast mode; then ncu durations of each kernel.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zc4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for round in 1 2; do
  FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 100 ./flexjit bench --suite suite_zc4.json --bwd-mode fast > $r/b_fast_r$round.jsonl 2> $r/b_fast_r$round.err
  echo "fast rc=$? $(( $(date +%s) - t0 )) s"
  for c in 2 1 4; do
    FLEXJIT_EXP_CHAINS=$c FLEXJIT_DETERMINISTIC_DQ=ordered FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 100 ./flexjit bench --suite suite_zc4.json --bwd-mode deterministic > $r/b_c${c}_r$round.jsonl 2> $r/b_c${c}_r$round.err
    echo "chains $c rc=$? $(( $(date +%s) - t0 )) s"
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/b_*.jsonl")):
    tag = re.search(r"b_(\w+?)_r\d", f).group(1)
    for line in open(f):
        line = line.strip()
        if not line.startswith("{"): continue
        o = json.loads(line)
        if "name" not in o: continue
        rows[o["name"]][tag].append(o.get("bwd_tflops"))
for n, d in rows.items():
    print(f"{n:28s}", " ".join(f"{k}={v}" for k, v in d.items()))
PY
for mode in fast ordered; do
  if [ $mode = fast ]; then env="FLEXJIT_DETERMINISTIC=0"; else env="FLEXJIT_DETERMINISTIC=1 FLEXJIT_DETERMINISTIC_DQ=ordered"; fi
  for prob in sliding_window_d128 causal_d128; do
    env $env FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 100 ncu --clock-control none --launch-skip 30 --launch-count 12 --metrics gpu__time_duration.sum \
      ./flexjit bench --suite suite_zc4.json --only $prob > $r/ncu_${mode}_$prob.txt 2>&1
    echo "ncu $mode $prob rc=$?"; grep -E "flexjit_|time_duration" $r/ncu_${mode}_$prob.txt | paste - - | awk '{print $1, $(NF)}' | sort | uniq -c | head -8
  done
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf zc4.tar.gz r && rm -rf r
