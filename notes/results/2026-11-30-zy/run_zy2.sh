#!/usr/bin/env bash
# (zy2) Why the half-slab kernel lost in the fast mode (zy1: MLA causal 0.87x, deterministic 1.14x):
# fast-mode A/B on MLA problems of main (old), the new build (shared buffer by warp 3: new), the
# same with warp 1 adding it (w1: templates_w1), and the new build at two stages (new_s2); then
# ncu --set full of old's and new's dK/dV kernel on mla_causal; then tests of the build.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zy2}; r=/tmp/zy2r/r; mkdir -p $r $out
save() { (cd /tmp/zy2r && tar czf $out/zy2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
export FLEXJIT_AUTOTUNE=off
P=mla_causal,mla_noop,mla_alibi_causal,mla_gqa_causal,causal_160_128,mla_sliding_window
for rd in 1 2; do
  for v in old new w1 new_s2; do
    case $v in
      old) run="./flexjit_main";; new) run="./flexjit";;
      w1) run="env FLEXJIT_TEMPLATE_DIR=$PWD/templates_w1 ./flexjit";;
      new_s2) run="./flexjit";;
    esac
    extra=""; [ $v = new_s2 ] && extra="--dkdv-config m64n64w8s2ws"
    FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 100 $run bench --suite mla_stages.json --only $P $extra --json $r/${v}_$rd.jsonl > $r/${v}_$rd.log 2>&1 || tail -3 $r/${v}_$rd.log
  done
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
v = collections.defaultdict(list); cfg = {}
for f in sorted(glob.glob(r + "/*_?.jsonl")):
    ver = f.split("/")[-1][:-8]
    for line in open(f):
        o = json.loads(line)
        if "name" in o: v[(o["name"], ver)].append(round(o.get("bwd_tflops", 0), 1)); cfg[(o["name"], ver)] = o.get("bwd_configs")
for n in sorted({k[0] for k in v}):
    a = v[(n, "old")]
    print(f"{n:22s} old {a} " + " ".join(f"{w} {v[(n,w)]} x{statistics.median(v[(n,w)])/max(statistics.median(a),1e-9):.3f}" for w in ("new", "w1", "new_s2") if v[(n,w)]))
PY
echo "A/B $(( $(date +%s) - t0 )) s"
save
for v in old new; do
  run=./flexjit; [ $v = old ] && run=./flexjit_main
  FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 150 ncu --kernel-name regex:flexjit_attention_bwd_dkdv --launch-skip 2 --launch-count 1 --set full --import-source yes -o $r/ncu_$v $run bench --suite mla_stages.json --only mla_causal > $r/ncu_$v.log 2>&1; echo "ncu $v rc=$? $(( $(date +%s) - t0 )) s"
  ncu --import $r/ncu_$v.ncu-rep --page details > $r/ncu_${v}_details.txt 2>&1
  ncu --import $r/ncu_$v.ncu-rep --page source --csv --print-source sass > $r/ncu_${v}_sass.csv 2>&1
  rm -f $r/ncu_$v.ncu-rep
  save
done
i=0
for f in BwdGpu.TilesWithAWholeSlabPastTheHeadDim BwdGpu.HeadDimsThatAreNoMultipleOf64 BwdGpu.HeadDimsAndHalfPrecision; do
  FLEXJIT_CACHE_DIR=/tmp/ft_$i timeout 200 ./gpu_test_attention --gtest_filter=$f > $r/test_$f.log 2>&1 &
  i=$((i+1))
done
wait
for f in $r/test_*.log; do echo "$(basename $f): $(grep -E '^\[  (PASSED|FAILED)  \]|Failure|threw|rror' $f | head -6 | tr '\n' ' ')"; done
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|Registers Per|Shared Memory Config" $r/ncu_*_details.txt | head -40
echo "all $(( $(date +%s) - t0 )) s"
save
