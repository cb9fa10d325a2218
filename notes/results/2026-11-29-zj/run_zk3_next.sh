#!/usr/bin/env bash
# For the next session, prepared in (zj), compiled but not run: the forward's exponentials on the
# FMA pipe at head dim 64 (zk_exp2_fma.patch). Counting: at d64 a 128 x 128 tile costs the
# tensor cores 2 x 128 x 128 x 64 multiply-adds (about 1024 clocks at 4096 flops per SM and
# clock) and the special-function unit 16384 ex2 at 16 per SM and clock (1024 clocks): both
# pipes must be full to reach the peak, and noop d64 runs 451-461 TF/s against FA4's 498 and the
# FLASH backend's 515 (ze3). exp2_fma computes 2^x with a cubic on the FMA pipe (7 FMA-pipe and 2
# integer operations; relative error 1.0e-4); the patch sends every fourth 8-column tile there
# at D <= 64 (EXP2_FMA_EVERY = 4: MUFU.EX2 per tile 66 -> 50 in the 'g' kernel), nothing at
# wider heads (their kernels unchanged). No spills (d64 g and ws, d64 causal, d128); the compile
# matrix's forward tests pass (wgmma pipelined, every mod and head dim, the lean-form rule).
# Three variants, forward only, three rounds alternating, tuning off: main (flexjit), the patch
# (flexjit_fma, every 4th tile), the patch with every 2nd tile (the same binary, its templates
# from a copy with EXP2_FMA_EVERY = 2 through FLEXJIT_TEMPLATE_DIR). Run from the repository root
# of a tree with the patch applied (templates/ is the patch's). Stage in .gpu/<s>/: flexjit,
# flexjit_fma, suite64x.json (notes/results/2026-11-26-p/), suite.json (bench/), this script.
# Then the forward GPU tests on the patch (every one runs the d64 kernels against float64, NaN
# and fully masked rows included), if it wins.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/zk3}; r=/tmp/zk3r/r; mkdir -p $r $out
rm -rf /tmp/t50 && cp -r templates /tmp/t50 && sed -i 's/constexpr int EXP2_FMA_EVERY = D <= 64 ? 4 : 0;/constexpr int EXP2_FMA_EVERY = D <= 64 ? 2 : 0;/' /tmp/t50/attention_fwd.cu.j2
grep -c "D <= 64 ? 2 : 0" /tmp/t50/attention_fwd.cu.j2 | sed 's/^/every-2nd variant rendered: /'
cd "$here"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
run() {  # tag binary template_dir
  FLEXJIT_TEMPLATE_DIR=$3 FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 100 ./$2 bench --no-bwd --suite suite64x.json --json $r/b_$1_$4.jsonl > $r/b_$1_$4.log 2>&1
  FLEXJIT_TEMPLATE_DIR=$3 FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 60 ./$2 bench --no-bwd --suite suite.json --only noop_d128,causal_d128 --json $r/c_$1_$4.jsonl > $r/c_$1_$4.log 2>&1
  echo "$1 $4 $(( $(date +%s) - t0 )) s"
}
for round in 1 2 3; do
  case $round in
    1) order="main fma4 fma2";; 2) order="fma2 fma4 main";; 3) order="fma4 main fma2";;
  esac
  for v in $order; do
    case $v in
      main) run main flexjit "" r$round;;
      fma4) run fma4 flexjit_fma "" r$round;;
      fma2) run fma2 flexjit_fma /tmp/t50 r$round;;
    esac
  done
done
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
r = sys.argv[1]
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{r}/[bc]_*.jsonl")):
    v = re.search(r"[bc]_(\w+?)_r\d", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("fwd_tflops"): rows[o["name"]][v].append(round(o["fwd_tflops"], 1))
for n, d in sorted(rows.items()):
    if d["main"]:
        m = statistics.median(d["main"])
        print(f"{n:24s} main {d['main']} every 4th {d['fma4']} x{statistics.median(d['fma4']) / m:.3f} every 2nd {d['fma2']} x{statistics.median(d['fma2']) / m:.3f}")
PY
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zk3r && tar czf $out/zk3.tar.gz r
