#!/usr/bin/env bash
# (zp) call 5, about 220 s: branch zp-fold-grad (the warp-specialised dK/dV kernel folds a
# score_mod's derivative into Pᵀ: ptxas spills at soft-capping d128 fast 144/112 -> 12/28 bytes,
# ordered 212/148 -> 80/80) against main 182495e on the soft-capping rows (d64, d128, d256), fast
# and deterministic, two rounds alternating; then the backward GPU tests with soft-capping (and
# NaN, masked rows, learnable buffers through tanh) on the branch, side by side.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zp5}; r=/tmp/zp5r/r; mkdir -p $r $out
save() { (cd /tmp/zp5r && tar czf $out/zp5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
bench() {  # bin mode round
  FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fcp_$1 timeout 40 ./flexjit_$1 bench --suite suite_softcap.json \
    --bwd-mode $2 --json $r/b_$1_$2_r$3.jsonl >> $r/b_$1.log 2>&1
  echo "$1 $2 r$3 rc=$? $(( $(date +%s) - t0 )) s"
}
for m in fast deterministic; do bench main $m 1; bench new $m 1; done
for m in deterministic fast; do bench new $m 2; bench main $m 2; done
save
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{sys.argv[1]}/b_*.jsonl")):
    b, m = re.search(r"b_(main|new)_(fast|deterministic)_", f).groups()
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("bwd_tflops"): rows[(o["name"], m)][b].append(round(o["bwd_tflops"], 1))
for (n, m), d in sorted(rows.items()):
    a, b = statistics.mean(d["main"] or [float("nan")]), statistics.mean(d["new"] or [float("nan")])
    print(f"{n:22s} {m:13s} main {d['main']} new {d['new']} x{b / a:.3f}")
PY
echo "part A $(( $(date +%s) - t0 )) s"
left=$(( 215 - ($(date +%s) - t0) ))
g1='BwdGpu.SuiteMods:BwdGpu.Gqa8To1AndBshd:BwdGpu.FullyMaskedRowsGiveZeroGradients'
g2='BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits:BwdGpu.HopperWgmmaPath:BwdGpu.OrderedModeNamesEachTileAfterItLands:BwdGpu.OrderedModeChainsAtHeadDim256'
g3='NegativeScaleGpu.*:BufferGradGpu.TwoLearnableBuffersThroughSoftcap:BufferGradGpu.RandomProblems'
g4='RandomProblemsGpu.*'
for g in g1 g2 g3 g4; do FLEXJIT_CACHE_DIR=/tmp/fc_$g timeout $left ./gpu_test_new --gtest_filter=${!g} > $out/$g.log 2>&1 & done
wait
for f in $out/g*.log; do echo "$(basename $f): $(grep -cE '^\[       OK' $f) ok, $(grep -cE '^\[  FAILED  \] [A-Z]' $f) failed, last: $(grep -E '^\[ +(RUN|OK|FAILED) +\]' $f | tail -1)"; done
grep -hE '^\[ +(OK|FAILED) +\]' $out/g*.log
grep -h -B3 -A8 'Failure' $out/g*.log | head -40
echo "$(( $(date +%s) - t0 )) s"
save
