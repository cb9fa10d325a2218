#!/bin/bash
# (zzzf) prepared for the next session, one call (carry .gpu/zzzf from prepare.sh; at most about
# 300 s): the branch's GPU tests that (zzzf) could not rerun: the forward's diagonal values with
# the window fix (FwdGpu.ScoreDiagonalValuesOutOfBounds failed before it on m128n64w8s2ws), the
# dK/dV kernel's at d128 (B1's, never under the gtests), the ragged-lengths test, neighbours; and
# memcheck of the fixed forward beside the guarded read. Then `BIN=./flexjit bash run_zzzf_c.sh`
# in a second call (the branch beside peers.py, about 250 s).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzfn}; r=/tmp/zzzfnr/r; mkdir -p $r $out
save() { (cd /tmp/zzzfnr && tar czf $out/zzzfn.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
go() { n=$1; f=$2; FLEXJIT_CACHE_DIR=/tmp/fcn_$n timeout 260 ./gta --gtest_filter="$f" > $r/tests_$n.txt 2>&1
  echo "tests_$n rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt; }
go a 'FwdGpu.ScoreDiagonalValuesOutOfBounds:BwdGpu.ScoreDiagonalValuesOutOfBounds:FwdGpu.ScoreColumnValuesOutOfBounds:FwdGpu.MaskColumnValuesOutOfBounds:FwdGpu.GuardedBufferReadsAreNotReported:FwdGpu.WarpSpecializedRowsPastTheQueriesEnd' &
go b 'FwdGpu.ScoreDiagonalValues' &
go c 'BwdGpu.ScoreDiagonalValues' &
go d 'SeqLensGpu.ScoreDiagonalValuesOfShortSequences:BwdGpu.WarpSpecializedFastDkdv:BwdGpu.TwoRunsOnTheSameInputsGiveTheSameBits' &
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng()
for n in ("q", "k", "v"): np.save(f"/tmp/z{n}.npy", rng.standard_normal((2, 3, 300, 64)).astype(np.float32))
np.save("/tmp/zfew.npy", rng.standard_normal(250).astype(np.float32))
PY
G="where(kv_idx <= q_idx && q_idx - kv_idx < 250, score + few[q_idx - kv_idx], score * 0.5)"
FLEXJIT_CACHE_DIR=/tmp/fcn_s timeout 150 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --kernel-name kns=attention_ \
  ./flexjit run --q /tmp/zq.npy --k /tmp/zk.npy --v /tmp/zv.npy --buffer few=/tmp/zfew.npy --score "$G" --config m128n64w8s2ws --check --out /tmp/zso > $r/san_guarded.txt 2>&1
echo "san guarded rc=$? $(grep -h 'ERROR SUMMARY\|relative error\|out of bounds' $r/san_guarded.txt | tr '\n' ' ')"
wait; cat $r/rc.txt
grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_*.txt | sort | uniq -c
echo "done $(( $(date +%s) - t0 )) s"; save
