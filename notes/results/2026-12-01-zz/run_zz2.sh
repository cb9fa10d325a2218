#!/usr/bin/env bash
# (zz2) score_mod constants folded into the scale and log2(e) (Expr::emit_cuda_prescaled):
# main (flexjit_main, f41f453) against the build, forward and both backward modes, rounds in
# alternating order; then the peers (FA4 and the FLASH backend included) on the same problems.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zz2}; r=/tmp/zz2r/r; mkdir -p $r $out
save() { (cd /tmp/zz2r && tar czf $out/zz2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $r/gpu.txt; cat $r/gpu.txt
t0=$(date +%s)
(bash ../../.fa4b/install.sh > $r/fa4_install.log 2>&1; echo "fa4 install rc $?" >> $r/fa4_install.log) &
inst=$!
export FLEXJIT_AUTOTUNE=off
S=softcap_causal_d128,alibi_causal_d128,causal_d128
X=softcap_causal_d64,softcap_causal_d256,softcap_noop_d128
for rd in 1 2 3; do
  for v in old new; do
    [ $((rd % 2)) = 0 ] && v=$([ $v = old ] && echo new || echo old)
    if [ $v = old ]; then run=./flexjit_main; else run=./flexjit; fi
    for m in fast deterministic; do
      [ $rd = 3 ] && [ $m = deterministic ] && continue
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 $run bench --suite suite.json --only $S --bwd-mode $m --json $r/${v}_${m}_$rd.s.jsonl > $r/${v}_${m}_$rd.s.log 2>&1 || tail -3 $r/${v}_${m}_$rd.s.log
      FLEXJIT_CACHE_DIR=/tmp/fc_$v timeout 120 $run bench --suite sc.json --only $X --bwd-mode $m --json $r/${v}_${m}_$rd.x.jsonl > $r/${v}_${m}_$rd.x.log 2>&1 || tail -3 $r/${v}_${m}_$rd.x.log
    done
  done
  echo "round $rd $(( $(date +%s) - t0 )) s"
done
python3 - $r <<'PY'
import json, sys, glob, collections, statistics
r = sys.argv[1]
bw = collections.defaultdict(list); fw = collections.defaultdict(list)
for f in sorted(glob.glob(r + "/*_*_?.?.jsonl")):
    ver, m, rd = f.split("/")[-1].split(".")[0].split("_")
    for line in open(f):
        o = json.loads(line)
        if "name" in o:
            bw[(o["name"], m, ver)].append(round(o.get("bwd_tflops", 0), 1)); fw[(o["name"], m, ver)].append(round(o.get("fwd_tflops", 0), 1))
for m in ("fast", "deterministic"):
    for n in sorted({k[0] for k in bw}):
        a, b = bw[(n, m, "old")], bw[(n, m, "new")]
        fa, fb = fw[(n, m, "old")], fw[(n, m, "new")]
        if a and b: print(f"{m:13s} {n:22s} bwd old {a} new {b} x{statistics.median(b)/max(statistics.median(a),1e-9):.3f} | fwd old {fa} new {fb} x{statistics.median(fb)/max(statistics.median(fa),1e-9):.3f}")
PY
save
wait $inst; tail -2 $r/fa4_install.log
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite suite.json --only $S --flash > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --suite sc.json --only softcap_causal_d64,softcap_noop_d128 --flash >> $r/peers.jsonl 2>> $r/peers.err || tail -3 $r/peers.err
python3 - $r <<'PY'
import json, sys
for line in open(sys.argv[1] + "/peers.jsonl"):
    try: o = json.loads(line)
    except Exception: continue
    if "name" in o: print(f"{o.get('system'):12s} {o['name']:22s} fwd {o.get('fwd_tflops')} bwd {o.get('bwd_tflops')}")
PY
echo "total $(( $(date +%s) - t0 )) s"
save
