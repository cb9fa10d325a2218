#!/bin/bash
# (zzzd) prepared for the next session, not run (the session's device time ran out: 165 s left,
# under the 4 minutes a start needs). One call (carry .gpu/zzzd3, built by prepare_e.sh; about
# 560 s): the branch score-diagonal-values (flexjit, gta) against main (flexjit_main).
# 1. Forward A/B main / D, rounds alternating, on diagonal_tables.json (per-head relative table
#    causal d128 / d64, the shared one, a T5 bucket) and two suite rows as controls (their SASS is
#    identical on the CPU).
# 2. `flexjit run --check` against float64 on odd shapes (Sq 333, Skv 517, GQA 3:1, per-sequence
#    lengths, 192-row tiles), the branch's GPU tests in parallel processes, and compute-sanitizer
#    memcheck / racecheck / synccheck on the forward beside a per-head relative table.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzde}; r=/tmp/zzzder/r; mkdir -p $r $out
save() { (cd /tmp/zzzder && tar czf $out/zzzde.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
python3 - <<'PY'
import json
d = json.load(open("diagonal_tables.json")); s = json.load(open("suite.json"))
rows = s["problems"] if isinstance(s, dict) else s
d["problems"] += [p for p in rows if p["name"] in ("causal_d128", "alibi_causal_d128")]
json.dump(d, open("ab_tables.json", "w"))
PY
OUT=$out bash ab2.sh zg ab_tables.json fwd_ms 200 5 "--no-bwd" main:./flexjit_main: D:./flexjit: 2>&1 | grep -v "^zg "
cp /tmp/zgr/r/ab.txt $r/ab.txt 2>/dev/null; cp /tmp/zgr/r/*.jsonl $r/ 2>/dev/null
echo "ab $(( $(date +%s) - t0 )) s"; save
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng()
os.makedirs("/tmp/zin", exist_ok=True)
for d in (64, 128):
    np.save(f"/tmp/zin/q_{d}.npy", rng.standard_normal((2, 6, 333, d)).astype(np.float32))
    np.save(f"/tmp/zin/k_{d}.npy", rng.standard_normal((2, 2, 517, d)).astype(np.float32))
    np.save(f"/tmp/zin/v_{d}.npy", rng.standard_normal((2, 2, 517, d)).astype(np.float32))
np.save("/tmp/zin/relh.npy", (2 * rng.standard_normal((6, 849))).astype(np.float32))
np.save("/tmp/zin/t5.npy", (3 * rng.standard_normal((6, 32))).astype(np.float32))
np.save("/tmp/zin/lens.npy", np.array([517, 300], dtype=np.int32))
np.save("/tmp/zin/qlens.npy", np.array([333, 201], dtype=np.int32))
PY
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fct_$n timeout 240 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'FwdGpu.ScoreDiagonalValues' &
go b 'FwdGpu.ScoreDiagonalValuesOutOfBounds:FwdGpu.ScoreColumnValues*' &
go c 'FwdGpu.SuiteMods:RandomProblemsGpu.*' &
T5="score + t5[h][where(kv_idx - q_idx > 0, 16, 0) + where(abs(kv_idx - q_idx) < 8, abs(kv_idx - q_idx), min(15, 8 + int(log(float(abs(kv_idx - q_idx)) / 8.0) / log(16.0) * 8.0)))]"
io() { echo --q /tmp/zin/q_$1.npy --k /tmp/zin/k_$1.npy --v /tmp/zin/v_$1.npy --buffer relh=/tmp/zin/relh.npy --buffer t5=/tmp/zin/t5.npy; }
export FLEXJIT_CACHE_DIR=/tmp/fczc
chk() { n=$1 d=$2; shift 2; timeout 60 ./flexjit run $(io $d) "$@" --check --out /tmp/zo_$n > $r/check_$n.txt 2>&1
  echo "check $n rc=$? $(grep -h 'relative error' $r/check_$n.txt | head -2 | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
(chk rc128 128 --score "score + relh[h][kv_idx - q_idx + 332]" --mask "q_idx >= kv_idx"
 chk rc64 64 --score "score + relh[h][kv_idx - q_idx + 332]" --mask "q_idx >= kv_idx"
 chk rn192 64 --score "score + relh[h][kv_idx - q_idx + 332]" --config m192n128w12s2ws
 chk t128 128 --score "$T5"
 chk sl128 128 --score "score + relh[h][kv_idx - q_idx + 332]" --mask "q_idx >= kv_idx" --seq-lens /tmp/zin/lens.npy --q-lens /tmp/zin/qlens.npy) > $r/check.txt
san() { n=$1 d=$2 tool=$3; shift 3
  timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 20 --kernel-name kns=attention_fwd \
    ./flexjit run $(io $d) "$@" --out /tmp/zsan_${n}_$tool > $r/san_${n}_$tool.txt 2>&1
  echo "san $n $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/san_${n}_$tool.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; }
for tool in memcheck racecheck synccheck; do
  (san rc128 128 $tool --score "score + relh[h][kv_idx - q_idx + 332]" --mask "q_idx >= kv_idx"
   san rc64 64 $tool --score "score + relh[h][kv_idx - q_idx + 332]" --mask "q_idx >= kv_idx") > $r/san_$tool.txt &
done
wait; cat $r/check.txt $r/san_memcheck.txt $r/san_racecheck.txt $r/san_synccheck.txt $r/rc.txt
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
echo "done $(( $(date +%s) - t0 )) s"; save
