#!/bin/bash
# zzs4: where racecheck's report of bulk_load (the statistics' bulk copy) against stats_pair (zzs1,
# ALiBi d128, mask q_idx >= kv_idx + 17, Sq 333 Skv 397 GQA 2:1) comes from: main's binary and
# this build on the same problem, and neighbours with and without the pairs.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzs4}; r=/tmp/zzs4r/r; mkdir -p $r $out
save() { (cd /tmp/zzs4r && tar czf $out/zzs4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
python3 - <<'PY'
import numpy as np, os
rng = np.random.default_rng(7)
os.makedirs("/tmp/zin", exist_ok=True)
for d in (128, 64):
    for sq, skv in ((333, 397), (333, 333)):
        n = f"d{d}_{sq}_{skv}"
        np.save(f"/tmp/zin/q_{n}.npy", rng.standard_normal((1, 4, sq, d)).astype(np.float32))
        np.save(f"/tmp/zin/k_{n}.npy", rng.standard_normal((1, 2, skv, d)).astype(np.float32))
        np.save(f"/tmp/zin/v_{n}.npy", rng.standard_normal((1, 2, skv, d)).astype(np.float32))
        np.save(f"/tmp/zin/do_{n}.npy", rng.standard_normal((1, 4, sq, d)).astype(np.float32))
np.save("/tmp/zin/slope.npy", (2.0 ** (-8.0 * np.arange(1, 5) / 4)).astype(np.float32))
PY
AL="score + slope[h] * (kv_idx - q_idx)"
rc() { n=$1; bin=$2; in=$3; shift 3
  I=(--q /tmp/zin/q_$in.npy --k /tmp/zin/k_$in.npy --v /tmp/zin/v_$in.npy --do /tmp/zin/do_$in.npy --buffer slope=/tmp/zin/slope.npy)
  FLEXJIT_CACHE_DIR=/tmp/fcr_$bin timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool racecheck --print-limit 40 ./$bin run "${I[@]}" "$@" --out /tmp/zo_$n > $r/rc_$n.txt 2>&1
  echo "$n rc=$? $(grep -h 'RACECHECK SUMMARY' $r/rc_$n.txt) | $(grep -ho 'Race reported between [A-Za-z]* access at [^(]*\|and [A-Za-z]* access at [^(]*' $r/rc_$n.txt | sort | uniq -c | tr -s ' ' | tr '\n' ';') $(( $(date +%s) - t0 )) s"; }
{
rc main_alibi128_m17 flexjit_main d128_333_397 --score "$AL" --mask "q_idx >= kv_idx + 17"
rc new_alibi128_m17 flexjit d128_333_397 --score "$AL" --mask "q_idx >= kv_idx + 17"
rc new_causal128_m17 flexjit d128_333_397 --mask "q_idx >= kv_idx + 17"
rc new_alibi128_full flexjit d128_333_397 --score "$AL"
rc new_alibi128_causal flexjit d128_333_333 --score "$AL" --mask "q_idx >= kv_idx"
rc main_alibi128_causal flexjit_main d128_333_333 --score "$AL" --mask "q_idx >= kv_idx"
rc new_alibi64_m17 flexjit d64_333_397 --score "$AL" --mask "q_idx >= kv_idx + 17"
rc new_plain64 flexjit d64_333_397
rc new_causal64_m17 flexjit d64_333_397 --mask "q_idx >= kv_idx + 17"
rc new_softcap128_m17 flexjit d128_333_397 --score "30.0 * tanh(score / 30.0)" --mask "q_idx >= kv_idx + 17"
} | tee $r/summary.txt
echo "done $(( $(date +%s) - t0 )) s"; save
