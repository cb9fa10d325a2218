#!/usr/bin/env bash
# (zzzu) call B, after call A copied .fa4a to /tmp/fa4a on this warm machine: carry .fa4b and
# .gpu/zzzub. Installs FA4, then on a quiet GPU: main's flexjit, peers.py --flash, early-convert's
# flexjit, then both again (forward + fast backward of the suite), main's deterministic mode.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzu}; r=/tmp/zzzur/r; mkdir -p $r $out
save() { (cd /tmp/zzzur && tar czf $out/zzzu_suite.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for f in *.xz; do [ -f "${f%.xz}" ] || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; chmod +x "${f%.xz}"; done
bash ../../.fa4b/join_install.sh > $r/install.txt 2>&1; echo "install rc=$? $(( $(date +%s) - t0 )) s"; tail -2 $r/install.txt
export FLEXJIT_AUTOTUNE=off
bench() { FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout $3 ./$1 bench --suite suite_official.json $4 --json $r/$2.jsonl > $r/$2.log 2>&1 || tail -3 $r/$2.log; echo "$2 $(( $(date +%s) - t0 )) s"; save; }
bench flexjit main1 120 ""
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 400 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite suite_official.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
bench flexjit_ec ec1 90 ""
bench flexjit main2 60 ""
bench flexjit_ec ec2 60 ""
left=$(( 540 - ($(date +%s) - t0) ))
[ $left -gt 30 ] && bench flexjit det $left "--bwd-mode deterministic"
python3 - $r <<'PY' | tee $r/table.txt
import json, sys, os, statistics as st
r = sys.argv[1]
def load(f):
    d = {}
    if os.path.exists(f):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line); d.setdefault(o["name"], {})[o.get("system", "flexjit")] = o
    return d
runs = {k: load(f"{r}/{k}.jsonl") for k in ("main1", "main2", "ec1", "ec2", "det")}
peers = load(f"{r}/peers.jsonl")
for n in runs["main1"]:
    g = lambda k, m: runs[k].get(n, {}).get("flexjit", {}).get(m) or 0
    mb = [g("main1", "bwd_ms"), g("main2", "bwd_ms")]; eb = [g("ec1", "bwd_ms"), g("ec2", "bwd_ms")]
    ab = (st.mean(mb) / st.mean(eb)) if all(mb + eb) else 0
    ps = " ".join(f"{s} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}" for s, v in sorted(peers.get(n, {}).items()))
    print(f"{n:28s} fwd {g('main1','fwd_tflops'):6.1f}/{g('main2','fwd_tflops'):6.1f} fast main {g('main1','bwd_tflops'):6.1f}/{g('main2','bwd_tflops'):6.1f} ec {g('ec1','bwd_tflops'):6.1f}/{g('ec2','bwd_tflops'):6.1f} main/ec {ab:.3f} det {g('det','bwd_tflops'):6.1f} | {ps}")
PY
echo "all $(( $(date +%s) - t0 )) s"
save
