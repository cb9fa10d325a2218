#!/bin/bash
# zzi2: (1) what the tuner picks on short sequences now that it tries one consumer warpgroup at
# two CTAs per SM, against the defaults, in one run; (2) two-dimensional bias tables: the
# default forward (spills 68-212 bytes) against the 'g' kernel, m128n64 and the two-CTA shape;
# (3) synccheck owed from (zzg).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzi2}; r=/tmp/zzi2r/r; mkdir -p $r $out
save() { (cd /tmp/zzi2r && tar czf $out/zzi2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - t0) )); }
only=causal_s129_b64,causal_s257_b32,causal_s512_b32,causal_s4096_b4,causal_s257_b32_d64,causal_s512_b32_d64,noop_s129_b64,noop_s512_b32_d64,gqa4_s512_b16
arm() { n=$1; s=$2; shift 2; FLEXJIT_CACHE_DIR=/tmp/fc_${n%_*} timeout 200 ./flexjit bench --suite $s --no-bwd --json $r/$n.jsonl "$@" > $r/$n.log 2>&1 || tail -3 $r/$n.log; echo "$n $(( $(date +%s) - t0 )) s"; save; }
FLEXJIT_AUTOTUNE=off arm def_1 short5.json --only $only
FLEXJIT_AUTOTUNE=on arm tuned_1 short5.json --only $only
FLEXJIT_AUTOTUNE=off arm def_2 short5.json --only $only
FLEXJIT_AUTOTUNE=on arm tuned_2 short5.json --only $only
export FLEXJIT_AUTOTUNE=off
for round in 1 2; do
  arm bdef_$round bias.json
  arm bg_$round bias.json --config m128n128w8s2g
  arm bn64_$round bias.json --config m128n64w8s2ws
  arm bc64_$round bias.json --config m64n64w4s2ws
done
python3 - $r > $r/ab.txt <<'PY'
import json, sys, glob
r = sys.argv[1]
def rows(a):
    d = {}
    for f in sorted(glob.glob(f"{r}/{a}_*.jsonl")):
        for line in open(f):
            if line.startswith("{") and '"name"' in line:
                o = json.loads(line)
                if o.get("fwd_tflops"): d.setdefault(o["name"], []).append((o["fwd_tflops"], o.get("fwd_config", "")))
    return d
for group in (["def", "tuned"], ["bdef", "bg", "bn64", "bc64"]):
    A = {a: rows(a) for a in group}
    for n in A[group[0]]:
        base = max(x for x, _ in A[group[0]][n])
        line = f"{n:22s}"
        for a in group:
            v = A[a].get(n, [(0, "")])
            best = max(v)
            line += f" | {a} {best[0]:6.1f} x{best[0] / base:.3f} ({' '.join(f'{x:.0f}' for x, _ in v)}) {best[1].split(' ')[0] if a == 'tuned' else ''}"
        print(line)
PY
cat $r/ab.txt; save
for t in BwdGpu.OrderedModeSplitsGqaGroupsOverCtas SeqLensGpu.WarpSpecializedOrderedBackward 'BufferGradGpu.*'; do
  [ $(left) -lt 40 ] && break
  FLEXJIT_CACHE_DIR=/tmp/fct timeout $(left) compute-sanitizer --tool synccheck ./gpu_test_attention --gtest_filter="$t" > $r/sync_${t//[.*]/_}.txt 2>&1
  echo "synccheck $t rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/sync_${t//[.*]/_}.txt | tail -3 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
  save
done
