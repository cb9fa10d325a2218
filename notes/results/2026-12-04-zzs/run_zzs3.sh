#!/usr/bin/env bash
# (zzs3) The build (prescaled score_mods) beside every peer, FA4 and FlexAttention's FLASH backend
# included (`--flash`), on the issue's suite (../shared/bench/suite.json: 13 rows), one call, after
# a call that copied .fa4a to /tmp/fa4a. flexjit forward + fast backward, the deterministic
# backward, FLEXJIT_AUTOTUNE=off; the peers; flexjit's fast run again.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzs3}; r=/tmp/zzs3r/r; mkdir -p $r $out
save() { (cd /tmp/zzs3r && tar czf $out/zzs3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
(cd ../.. && timeout 150 bash .fa4b/install.sh) > $r/install.txt 2>&1 &
inst=$!
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b
timeout 120 ./flexjit bench --suite suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit fast $(( $(date +%s) - t0 )) s"
timeout 100 ./flexjit bench --suite suite.json --bwd-mode deterministic --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1 || tail -3 $r/flexjit_det.log
echo "flexjit det $(( $(date +%s) - t0 )) s"
save
wait $inst; echo "install: $(tail -1 $r/install.txt)"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 440 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
left=$(( 470 - ($(date +%s) - t0) ))
[ $left -gt 40 ] && timeout $left ./flexjit bench --suite suite.json --json $r/flexjit_r2.jsonl > $r/flexjit_r2.log 2>&1
echo "flexjit again $(( $(date +%s) - t0 )) s"
python3 compare.py $r/flexjit.jsonl $r/peers.jsonl > $r/compare.txt 2>&1; tail -40 $r/compare.txt
python3 - $r <<'PY'
import json, sys, os
r = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d[o["name"]] = o
    return d
fast, det, again = load(f"{r}/flexjit.jsonl"), load(f"{r}/flexjit_det.jsonl"), load(f"{r}/flexjit_r2.jsonl")
peers = {}
for line in open(f"{r}/peers.jsonl"):
    if line.startswith("{") and '"name"' in line:
        o = json.loads(line); peers.setdefault(o["name"], {})[o["system"]] = o
for n, o in fast.items():
    a = again.get(n, {})
    ps = " ".join(f"{s} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}" for s, v in sorted(peers.get(n, {}).items()))
    print(f"{n:28s} fwd {o.get('fwd_tflops', 0):6.1f} / {a.get('fwd_tflops', 0):6.1f}  fast {o.get('bwd_tflops', 0):6.1f} / {a.get('bwd_tflops', 0):6.1f}  det {det.get(n, {}).get('bwd_tflops', 0):6.1f} | {ps}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
# the rule's other kernels (not timed in zzs2), main against the build, alternating while time is left
for n in 1 2 3 4; do
  [ $(( $(date +%s) - t0 )) -gt 530 ] && break
  for v in off on; do b=./flexjit; [ $v = off ] && b=./flexjit_main
    FLEXJIT_CACHE_DIR=/tmp/fc3_$v timeout 40 $b bench --json $r/ab_${v}_$n.jsonl --suite zzs3.json > $r/ab_${v}_$n.log 2>&1; echo "ab $v $n rc=$? $(( $(date +%s) - t0 )) s"; done
done
grep -h '"bwd_ms"' $r/ab_*.jsonl 2>/dev/null | python3 -c "
import sys, json
for l in sys.stdin: o = json.loads(l); print(o['name'], o['bwd_ms'])" 
for f in $r/ab_*.jsonl; do echo "$f: $(python3 -c "import json,sys; print(' '.join(f\"{json.loads(l)['name']} {json.loads(l)['bwd_ms']:.4f}\" for l in open(sys.argv[1]) if l.startswith('{') and 'bwd_ms' in l))" $f)"; done
save
