#!/usr/bin/env bash
# Session (zb) zb4: the next wave's K and V prefetched into L2 near each dK/dV CTA's end
# (KV_PREFETCH_TILES = 4; t2 / t8: 2 and 8 tiles before the end, template variants on the new
# binary). Tests on the new binary, then rounds against main's binary (fast backward TF/s).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zb4}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_tests timeout 150 ./gpu_test_attention --gtest_filter='BwdGpu.FastModeWritesDqOfQueryTilesNoKeyReaches:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.Gqa8To1AndBshd' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A6 $r/tests.txt | head -30
P128=noop_d128,causal_d128,document_causal_d128,gqa_causal_d128,sliding_window_d128,prefix_lm_d128
P64=noop_d64,causal_d64,document_causal_d64,sliding_window_d64
run() {  # variant round
  v=$1; bin=./flexjit; tdir=""
  [ $v = base ] && bin=./flexjit_base
  case $v in t2|t8) tdir=$PWD/$v;; esac
  FLEXJIT_TEMPLATE_DIR=$tdir FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 90 $bin bench --suite suite.json --only $P128 --json $r/${v}_128_$2.jsonl > $r/${v}_128_$2.log 2>&1 || tail -2 $r/${v}_128_$2.log
  FLEXJIT_TEMPLATE_DIR=$tdir FLEXJIT_CACHE_DIR=/tmp/fc_ab_$v timeout 60 $bin bench --suite suite64x.json --only $P64 --json $r/${v}_$2.jsonl > $r/${v}_$2.log 2>&1 || tail -2 $r/${v}_$2.log
  echo "$v $2 $(( $(date +%s) - t0 )) s"
}
run base 1; run new 1; run t2 1; run t8 1; run new 2; run base 2; run t8 2; run t2 2
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, statistics, math
d = sys.argv[1]
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j.get("bwd_tflops", 0)
    except OSError: pass
    return out
names = "noop_d128,causal_d128,document_causal_d128,gqa_causal_d128,sliding_window_d128,prefix_lm_d128,noop_d64,causal_d64,document_causal_d64,sliding_window_d64".split(",")
geo = {v: [] for v in ("new", "t2", "t8")}
for n in names:
    suf = "_128" if n.endswith("d128") else ""
    vals = {v: [load(f"{d}/{v}{suf}_{i}.jsonl").get(n, 0) for i in (1, 2)] for v in ("base", "new", "t2", "t8")}
    b = statistics.mean(vals["base"])
    line = f"{n:22} base {'/'.join(f'{x:.0f}' for x in vals['base'])}"
    for v in ("new", "t2", "t8"):
        x = statistics.mean(vals[v]) / max(b, 1e-9); geo[v].append(x)
        line += f"  {v} {'/'.join(f'{y:.0f}' for y in vals[v])} {x:.3f}"
    print(line)
print("geomean " + " ".join(f"{v} {math.exp(sum(map(math.log, g)) / len(g)):.3f}" for v, g in geo.items()))
PY
cd $out && tar czf zb4.tar.gz r && rm -rf r
