#!/bin/bash
# zzi1: one consumer warpgroup at two CTAs per SM (m64n64w4s2ws; m64n128w4s2ws, two CTAs at d64
# only) against the default forward and cuDNN on short and mid lengths; then the GPU tests,
# an occupancy check and racecheck / synccheck of the new kernel shape. Staged beside it:
# ../2026-12-01-zzg/offsuite_peers.py and ../shared/bench/peers.py.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzi1}; r=/tmp/zzi1r/r; mkdir -p $r $out
save() { (cd /tmp/zzi1r && tar czf $out/zzi1.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - t0) )); }
arm() { n=$1; shift; FLEXJIT_CACHE_DIR=/tmp/fc_${n%_*} timeout 120 ./flexjit bench --suite short5.json --no-bwd --json $r/$n.jsonl "$@" > $r/$n.log 2>&1 || tail -3 $r/$n.log; echo "$n $(( $(date +%s) - t0 )) s"; save; }
arm def_1
arm c64_1 --config m64n64w4s2ws
arm c64n128_1 --config m64n128w4s2ws
timeout 120 python3 offsuite_peers.py --suite short5.json --no-flex > $r/sdpa.jsonl 2> $r/sdpa.err || tail -3 $r/sdpa.err
echo "sdpa $(( $(date +%s) - t0 )) s"; save
arm def_2
arm c64_2 --config m64n64w4s2ws
python3 - $r > $r/ab.txt <<'PY'
import json, sys, os, glob
r = sys.argv[1]
def rows(pattern):
    d = {}
    for f in sorted(glob.glob(f"{r}/{pattern}")):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line)
                if o.get("fwd_tflops"): d.setdefault(o["name"], {}).setdefault(o.get("system", "flexjit"), []).append(o["fwd_tflops"])
    return d
A = {a: rows(f"{a}_*.jsonl") for a in ["def", "c64", "c64n128"]}
P = rows("sdpa.jsonl")
for n in A["def"]:
    d = max(A["def"][n]["flexjit"]); c = max(A["c64"].get(n, {}).get("flexjit", [0])); e = max(A["c64n128"].get(n, {}).get("flexjit", [0]))
    line = f"{n:22s} def {d:6.1f} c64 {c:6.1f} x{c/d:.3f} c64n128 {e:6.1f} x{e/d:.3f}"
    for s, v in sorted(P.get(n, {}).items()):
        line += f" | {s} {max(v):.1f} (def/{s} {d/max(v):.2f}, c64/{s} {c/max(v):.2f})"
    print(line)
PY
cat $r/ab.txt; save
# Two CTAs resident per SM? (occupancy limits and achieved occupancy of the new shape)
timeout 90 ncu --kernel-name regex:flexjit_attention_fwd --launch-skip 3 --launch-count 1 --section LaunchStats --section Occupancy \
  ./flexjit bench --suite short5.json --only causal_s257_b32 --no-bwd --config m64n64w4s2ws > $r/ncu_occ.txt 2>&1 || tail -3 $r/ncu_occ.txt
grep -E "Registers Per|Shared Memory Config|Dynamic Shared|Block Limit|Achieved Occupancy|Theoretical Occupancy|Grid Size|Block Size" $r/ncu_occ.txt | head -20
save; echo "ncu $(( $(date +%s) - t0 )) s"
FLEXJIT_CACHE_DIR=/tmp/fct timeout $(left) ./gpu_test_attention --gtest_filter='FwdGpu.WarpSpecializedModsTwoCtasPerSm:FwdGpu.WarpSpecializedTwoCtasPerSmManyTilesPerCta:FwdGpu.WarpSpecializedModsOneConsumer:FwdGpu.WarpSpecializedManyTilesPerCta:FwdGpu.MaskColumnValues:FwdGpu.WarpSpecializedEmptyAndOneKeyTileWalks' > $r/tests.txt 2>&1
grep -E "^\[  (PASSED|FAILED) |OK \]|FAILED \]|tests ran" $r/tests.txt | tail -12; save; echo "tests $(( $(date +%s) - t0 )) s"
for tool in racecheck synccheck; do
  [ $(left) -lt 40 ] && break
  FLEXJIT_CACHE_DIR=/tmp/fct timeout $(left) compute-sanitizer --tool $tool ./gpu_test_attention --gtest_filter=FwdGpu.WarpSpecializedTwoCtasPerSmManyTilesPerCta > $r/$tool.txt 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|hazard|PASSED|FAILED' $r/$tool.txt | tail -3 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  save
done
