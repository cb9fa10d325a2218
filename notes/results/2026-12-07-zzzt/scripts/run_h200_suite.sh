#!/usr/bin/env bash
# (zzzt) call B, after run_zzzr_1.sh installed FA4 on this warm machine: the suite beside every
# peer (FA4 and FLASH with --flash) on whatever card this is (issues 12 and 13 ask for an H200 run
# too). Carry .gpu/zzzr. On a quiet GPU: flexjit (BIN, main's binary) forward + fast backward,
# peers.py --flash, flexjit again, flexjit deterministic.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzt}; r=/tmp/zzztr/r; mkdir -p $r $out
save() { (cd /tmp/zzztr && tar czf $out/zzzt_suite.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for f in *.xz; do [ -f "${f%.xz}" ] || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"; chmod +x "${f%.xz}"; done
test -d /tmp/site/flash_attn || echo "FA4 not installed: run run_zzzr_1.sh first on this machine" > $r/install.txt
echo "install: $(cat $r/install.txt 2>/dev/null) ok"
save
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b
BIN=${BIN:-flexjit}
timeout 120 ./$BIN bench --suite suite.json --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit fast $(( $(date +%s) - t0 )) s"
save
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 420 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite suite.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
save
left=$(( 470 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && timeout $left ./$BIN bench --suite suite.json --json $r/flexjit_r2.jsonl > $r/flexjit_r2.log 2>&1
echo "flexjit again $(( $(date +%s) - t0 )) s"
left=$(( 520 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && timeout $left ./$BIN bench --bwd-mode deterministic --suite suite.json --json $r/flexjit_det.jsonl > $r/flexjit_det.log 2>&1
echo "flexjit deterministic $(( $(date +%s) - t0 )) s"
save
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
fast, again, det = load(f"{r}/flexjit.jsonl"), load(f"{r}/flexjit_r2.jsonl"), load(f"{r}/flexjit_det.jsonl")
peers = {}
if os.path.exists(f"{r}/peers.jsonl"):
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
# Then the GQA 3:1 cases (zzzs) added to ManyKvTiles, on main's kernels, with what time is left.
source ./device_lib.sh
device_start $r/tests
device_unpack .
left=$(( 575 - ($(date +%s) - t0) ))
[ $left -gt 20 ] && { device_tests many ./gta 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles' $left; wait; device_failures; }
save
