#!/usr/bin/env bash
# For the next session, prepared in (zp), not run: the forward's exponentials partly on the FMA
# pipe where score_mod itself runs on the special-function unit (branch zq-exp2-fma-sfu-mods:
# (zk)'s exp2_fma, now only for such score_mods at head dim >= 128). Soft-capping d128 forward is
# 0.77x causal's (zp4: 453.7 against 585.8): tanh.approx and the softmax's ex2 take the unit twice
# per score, 0.125 clocks per score at 16 per SM and clock, as long as the tensor cores' 2 x 2 x 128
# flops at 4096 per clock. One call, about 200 s: forward TF/s from `flexjit bench`, two rounds
# alternating, three variants:
#   main    flexjit_main (main's build)
#   every4  flexjit_zq (the branch's build): every 4th 8-column score tile on the FMA pipe
#   every2  flexjit_zq + tpl_every2 (the branch's templates with `? 4 : 0` -> `? 2 : 0`)
# then the forward GPU tests on the branch. Stage in .gpu/<s>/: flexjit_main, flexjit_zq,
# gpu_test_zq (strip -o from the builds), suite.json, suite256.json, tpl_every2 (git archive of
# the branch's templates, then sed), this script.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zq2}; r=/tmp/zq2r/r; mkdir -p $r $out
save() { (cd /tmp/zq2r && tar czf $out/zq2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
bench() {  # tag round suite only
  local bin=flexjit_zq tpl=""
  case $1 in main) bin=flexjit_main ;; every2) tpl=tpl_every2 ;; esac
  FLEXJIT_TEMPLATE_DIR=${tpl:+$PWD/$tpl} FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout 60 ./$bin bench --no-bwd --suite $3 --only $4 \
    --json $r/b_$1_${3%.json}_r$2.jsonl >> $r/b_$1.log 2>&1
  echo "$1 $3 r$2 rc=$? $(( $(date +%s) - t0 )) s"
}
for round in 1 2 3; do
  order="main every4 every2"; [ $round = 2 ] && order="every2 every4 main"; [ $round = 3 ] && order="every4 main every2"
  for v in $order; do
    bench $v $round suite.json softcap_causal_d128,causal_d128,alibi_causal_d128
    bench $v $round suite256.json softcap_causal_d256
  done
done
save
python3 - $r <<'PY' | tee $r/summary.txt
import json, sys, glob, re, collections, statistics
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(f"{sys.argv[1]}/b_*.jsonl")):
    v = re.search(r"b_(main|every4|every2)_", f).group(1)
    for line in open(f):
        if line.startswith("{"):
            o = json.loads(line)
            if o.get("fwd_tflops"): rows[o["name"]][v].append(round(o["fwd_tflops"], 1))
for n, d in sorted(rows.items()):
    m = statistics.median(d["main"])
    print(f"{n:22s} " + " | ".join(f"{v} {d[v]} x{statistics.median(d[v]) / m:.3f}" for v in ["main", "every4", "every2"] if d[v]))
PY
left=$(( 420 - ($(date +%s) - t0) ))
FLEXJIT_CACHE_DIR=/tmp/fn timeout $left ./gpu_test_main --gtest_filter='BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt' > $out/nan_test.log 2>&1 &
FLEXJIT_CACHE_DIR=/tmp/ft timeout $left ./gpu_test_zq --gtest_filter='FwdGpu.SuiteMods:FwdGpu.WarpSpecializedOnePerHeadDim:FwdGpu.HalfPrecisionAndHeadDims:FwdGpu.WarpSpecializedModsTwoConsumers:FwdGpu.WarpSpecializedModsHeadDim256:FwdGpu.WarpSpecializedFullyMaskedRows' > $out/fwd_tests.log 2>&1
wait
grep -hE '^\[ +(OK|FAILED) +\]' $out/fwd_tests.log $out/nan_test.log
grep -B3 -A3 Failure $out/nan_test.log | head -30
echo "$(( $(date +%s) - t0 )) s"
save
