#!/bin/bash
# (zzzc) One call (carry .gpu/zzzc; about 400 s): arm SD (main 6f7ac7f: score column values with
# log2(e) distributed over `score + R`, one FFMA per score) against SC (the merge 1260611: score
# column values, (score + R) * log2(e) per score). Kernels without score column values are SASS
# identical between them.
# 1. gta's forward tests that reach it, in parallel processes, against float64.
# 2. `flexjit run --check` and compute-sanitizer memcheck / racecheck / synccheck on a per-key bias
#    forward (Sq 333, Skv 901, GQA 3:1) at d64 and d128.
# 3. A/B SC / SD over bias_tables.json (forward ms, rounds alternating), then FlexAttention
#    (Triton) on the same problems in the same call (the bar: per-key bias >= 1.3x it).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzcs}; r=/tmp/zzzcsr/r; mkdir -p $r $out
save() { (cd /tmp/zzzcsr && tar czf $out/zzzcs.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 200 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'FwdGpu.ScoreColumnValues' &
go b 'FwdGpu.ScoreColumnValuesOutOfBounds:FwdGpu.MaskColumnValuesOutOfBounds:ErrorWordsGpu.*' &
go c 'FwdGpu.SuiteMods:FwdGpu.MaskColumnValues' &
go d 'BufferGradGpu.*' &
wait
cat $r/rc.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
save
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for d in (64, 128):
    np.save(f"/tmp/zin/q_{d}.npy", rng.standard_normal((2, 6, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{d}.npy", rng.standard_normal((2, 2, 901, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{d}.npy", rng.standard_normal((2, 2, 901, d)).astype(np.float32))
np.save("/tmp/zin/kb.npy", (2.0 * rng.standard_normal((2, 901))).astype(np.float32))
PY
io() { echo --q /tmp/zin/q_$1.npy --k /tmp/zin/k_$1.npy --v /tmp/zin/v_$1.npy --buffer kb=/tmp/zin/kb.npy; }
for d in 64 128; do
  FLEXJIT_CACHE_DIR=/tmp/fcc ./flexjit run $(io $d) --score "score + kb[b][kv_idx]" --mask "q_idx + 300 >= kv_idx" \
    --check --out /tmp/zout_$d > $r/check_$d.txt 2>&1; echo "check d$d rc=$? $(tail -3 $r/check_$d.txt | tr '\n' ' ')"
done
san() { d=$1 tool=$2
  FLEXJIT_CACHE_DIR=/tmp/fcs_$tool timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 \
    --kernel-name kns=attention_fwd ./flexjit run $(io $d) --score "score + kb[b][kv_idx]" --mask "q_idx + 300 >= kv_idx" \
    --out /tmp/zsan_${d}_$tool > $r/san_${d}_$tool.txt 2>&1
  echo "san d$d $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${d}_$tool.txt | tr '\n' ' ')"; }
for tool in memcheck racecheck synccheck; do (san 64 $tool; san 128 $tool) > $r/san_$tool.txt & done
wait; cat $r/san_memcheck.txt $r/san_racecheck.txt $r/san_synccheck.txt
save
left=$(( 430 - ($(date +%s) - t0) ))
[ $left -gt 100 ] && bash ab2.sh zs bias_tables.json fwd_ms $(( left - 90 )) 4 "--no-bwd" SC:./flexjit_SC: SD:./flexjit: \
  2>&1 | grep -v "^zs "
cp /tmp/zsr/r/ab.txt $r/ab.txt 2>/dev/null; cp /tmp/zsr/r/*.jsonl $r/ 2>/dev/null
save
timeout 170 python3 peers.py --no-bwd --suite bias_tables.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
python3 - $r <<'PY'
import json, sys, glob, statistics as st
r = sys.argv[1]
t = {}
for f in glob.glob(f"{r}/*_[0-9].jsonl"):
    arm = f.rsplit("/", 1)[1].rsplit("_", 1)[0]
    for l in open(f):
        if l.startswith("{") and '"name"' in l:
            o = json.loads(l)
            if o.get("fwd_tflops"): t.setdefault(o["name"], {}).setdefault(arm, []).append(o["fwd_tflops"])
flex = {}
for l in open(f"{r}/peers.jsonl"):
    if l.startswith("{") and '"name"' in l:
        o = json.loads(l)
        if o.get("system") == "flex": flex[o["name"]] = o.get("fwd_tflops")
for n, v in sorted(t.items()):
    m = {a: st.median(x) for a, x in v.items()}
    f = flex.get(n)
    print(f"{n:28s} " + " ".join(f"{a} {x:.0f}" for a, x in sorted(m.items())) + (f" | flex {f:.0f} | " + " ".join(f"{a}/flex {x / f:.2f}" for a, x in sorted(m.items())) if f else ""))
PY
# 4. Where the time goes (ncu, one launch each): per-key bias causal d64 (SD) beside noop causal d64.
nc() { FLEXJIT_CACHE_DIR=/tmp/fcn timeout 120 /usr/local/cuda/bin/ncu --section SpeedOfLight --section WarpStateStats \
    --section InstructionStats --section ComputeWorkloadAnalysis -k regex:flexjit_attention_fwd -c 1 \
    ./flexjit bench --suite $1 --only $2 --no-bwd > $r/ncu_$2.txt 2>&1; echo "ncu $2 rc=$?"; }
[ $(( $(date +%s) - t0 )) -lt 470 ] && nc bias_tables.json keybias_causal_d64
[ $(( $(date +%s) - t0 )) -lt 520 ] && nc suite.json causal_d64
echo "done $(( $(date +%s) - t0 )) s"; save
