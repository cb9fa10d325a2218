#!/usr/bin/env bash
# Session (x) x6: 1) the new many-kv-tiles test on the landing build (main's kernels); 2) ncu of
# documents d128's dK/dV kernel, base = main bb14813's binary against x5's (walk-length order
# within the launch groups): L2 hit rate and traffic, for why the kv-tile order wins.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/x6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_x6t timeout 100 ./gpu_test_attention --gtest_filter='BwdGpu.WarpSpecializedFastDkdvManyKvTiles' > $r/tests.txt 2>&1
echo "tests rc=$? $(grep -E '^\[ +(OK|FAILED|PASSED) ' $r/tests.txt | sed -E 's/\[ +(OK|FAILED) +\] //' | tr '\n' ' ') $(( $(date +%s) - t0 )) s"; grep -E 'Failure|error:' -A6 $r/tests.txt | head -30
export FLEXJIT_AUTOTUNE=off
for v in base x5; do
  bin=./flexjit_x5; [ $v = base ] && bin=./base/flexjit
  FLEXJIT_CACHE_DIR=/tmp/fc_x6_$v timeout 60 $bin bench --suite suite.json --only document_causal_d128 > /dev/null 2>&1
  FLEXJIT_CACHE_DIR=/tmp/fc_x6_$v timeout 100 ncu --kernel-name regex:'bwd_dkdv$' --launch-count 1 --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg $bin bench --suite suite.json --only document_causal_d128 > $r/ncu_$v.txt 2>&1
  echo "$v rc=$? $(grep -E 'gpu__time|hit_rate|lts__t_bytes|dram__bytes|sm__cycles' $r/ncu_$v.txt | sed -E 's/ +/ /g' | tr '\n' '|') $(( $(date +%s) - t0 )) s"
done
cd $out && tar czf x6.tar.gz r && rm -rf r
