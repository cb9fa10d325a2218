#!/usr/bin/env bash
# Session (w) w1, main at bb14813: 1) the tests not yet run on a GPU (2a32cf6's test shape,
# 85c9d62's decode and block-mask read sets); 2) ncu source counters of the documents d64 forward
# and, for reference, causal d64 (same config, ws).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/w1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_w1t timeout 200 ./gpu_test_attention --gtest_filter='BwdGpu.OrderedModeNamesEachTileAfterItLands:DecodeGpu.*Buffer*:DecodeGpu.ModsReadLengthsBuffersAndParams:DecodeGpu.TileBounds*' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A4 $r/tests.txt | head -30
FLEXJIT_CACHE_DIR=/tmp/fc_w1t timeout 100 ./gpu_test_mask > $r/mask.txt 2>&1
echo "mask rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/mask.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure' -A4 $r/mask.txt | head -20
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_w1b
for p in document_causal_d64 causal_d64; do
  timeout 60 ./flexjit bench --suite suite64x.json --only $p --no-bwd > $r/bench_$p.log 2>&1
  timeout 200 ncu --kernel-name regex:flexjit_attention_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section LaunchStats --import-source no -o $r/rep_$p ./flexjit bench --suite suite64x.json --only $p --no-bwd > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$p.ncu-rep --print-details all > $r/details_$p.txt 2>&1
  ncu -i $r/rep_$p.ncu-rep --page source --csv --print-source sass > $r/src_$p.csv 2>&1
  grep -E 'Duration|Tensor|Issue Slots Busy|Executed Ipc A' $r/details_$p.txt | head -8
done
# The whole forward call's kernels, for per-call overheads (nsys if present).
if command -v nsys >/dev/null; then
  timeout 120 nsys profile -o $r/nsys_doc --force-overwrite true ./flexjit bench --suite suite64x.json --only document_causal_d64 --no-bwd > /dev/null 2>&1
  nsys stats --report cuda_gpu_kern_sum $r/nsys_doc.nsys-rep > $r/nsys_doc.txt 2>&1; head -20 $r/nsys_doc.txt
fi
echo "total $(( $(date +%s) - t0 )) s"
rm -f $r/*.ncu-rep $r/*.nsys-rep $r/*.sqlite
cd $out && tar czf w1.tar.gz r && rm -rf r
