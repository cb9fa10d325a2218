#!/bin/bash
# zzj2: shapes users bring (users.json: vision encoders, diffusion, speech, short LLM rows):
# flexjit's defaults and its tuner's picks against SDPA's cuDNN and FA2, forward + fast backward;
# then the random-problem tests at 3x their default count (fresh seeds, printed).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzj2}; r=/tmp/zzj2r/r; mkdir -p $r $out
save() { (cd /tmp/zzj2r && tar czf $out/zzj2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
left() { echo $(( 570 - ($(date +%s) - t0) )); }
FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_def timeout 150 ./flexjit bench --suite users.json --json $r/def.jsonl > $r/def.log 2>&1 || tail -3 $r/def.log
echo "def $(( $(date +%s) - t0 )) s"; save
timeout 120 python3 offsuite_peers.py --suite users.json --no-flex > $r/sdpa.jsonl 2> $r/sdpa.err || tail -3 $r/sdpa.err
echo "sdpa $(( $(date +%s) - t0 )) s"; save
FLEXJIT_AUTOTUNE=on FLEXJIT_CACHE_DIR=/tmp/fc_tuned timeout 200 ./flexjit bench --suite users.json --json $r/tuned.jsonl > $r/tuned.log 2>&1 || tail -3 $r/tuned.log
echo "tuned $(( $(date +%s) - t0 )) s"; save
python3 - $r > $r/table.txt <<'PY'
import json, sys, glob
r = sys.argv[1]
def rows(f):
    d = {}
    for line in open(f):
        if line.startswith("{") and '"name"' in line:
            o = json.loads(line)
            d.setdefault(o["name"], {})[o.get("system", "flexjit")] = o
    return d
D, T, S = rows(f"{r}/def.jsonl"), rows(f"{r}/tuned.jsonl"), rows(f"{r}/sdpa.jsonl")
for n, v in D.items():
    d = v["flexjit"]; t = T.get(n, {}).get("flexjit", {})
    line = f"{n:18s} def {d.get('fwd_tflops',0):6.1f}/{d.get('bwd_tflops',0):6.1f} tuned {t.get('fwd_tflops',0):6.1f}/{t.get('bwd_tflops',0):6.1f} ({t.get('fwd_config','')}, {t.get('dkdv_config', t.get('bwd_config',''))})"
    for s, o in sorted(S.get(n, {}).items()):
        f, b = o.get("fwd_tflops", 0), o.get("bwd_tflops", 0)
        bf = max(d.get('fwd_tflops',0), t.get('fwd_tflops',0)); bb = max(d.get('bwd_tflops',0), t.get('bwd_tflops',0))
        line += f" | {s} {f:.1f}/{b:.1f} ({bf/f if f else 0:.2f}/{bb/b if b else 0:.2f})"
    print(line)
PY
cat $r/table.txt; save
FLEXJIT_RANDOM_PROBLEMS=18 FLEXJIT_CACHE_DIR=/tmp/fc_rand timeout $(left) ./gpu_test_attention --gtest_filter='RandomProblemsGpu.*' > $r/random.txt 2>&1
echo "random rc=$? $(( $(date +%s) - t0 )) s"; grep -E "seed|^\[  (PASSED|FAILED) |OK \]|FAILED \]|Failure" $r/random.txt | head -20; save
