#!/bin/bash
# (zzx) 1: the lazy rescale in the forward, A/B of main's templates against two arms (A: the PV
# wait before the lazy softmax, main's schedule; B: the lazy softmax ahead of the PV wait), then
# the new test on both arms.
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; r=/tmp/l1r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
bash ab2.sh l2ab fwd16.json fwd_ms 300 3 "--no-bwd" main:./flexjit:$PWD/tv_main/templates B:./flexjit:$PWD/tvB/templates C:./flexjit:$PWD/tvC/templates D:./flexjit:$PWD/tvD/templates 2>&1 | grep -v "^l2ab "
echo "ab $(( $(date +%s) - t0 )) s"
cp /tmp/l2abr/r/ab.txt $r/ 2>/dev/null
(cd /tmp/l1r && tar czf $out/l1.tar.gz r); cp /tmp/out/l2ab.tar.gz $out/ 2>/dev/null
echo "done $(( $(date +%s) - t0 )) s"
