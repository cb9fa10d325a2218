#!/usr/bin/env bash
# Session (x) x3: where the persistent dK/dV kernel loses (ncu, base = main bb14813's binary, new =
# the x2 build): speed of light and warp states of the first dK/dV launch of documents d128 and
# long documents d128 (FLEXJIT_AUTOTUNE=off).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/x3}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
for prob in long_document_causal_d128 document_causal_d128; do
  for v in base new; do
    bin=./flexjit; [ $v = base ] && bin=./base/flexjit
    FLEXJIT_CACHE_DIR=/tmp/fc_x3_$v timeout 60 $bin bench --suite suite.json --only $prob > /dev/null 2>&1  # compile first
    FLEXJIT_CACHE_DIR=/tmp/fc_x3_$v timeout 150 ncu --kernel-name regex:bwd_dkdv --launch-count 1 --section SpeedOfLight --section WarpStateStats --section LaunchStats --metrics sm__cycles_active.avg,sm__cycles_elapsed.avg,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,lts__t_bytes.sum,dram__bytes.sum $bin bench --suite suite.json --only $prob > $r/ncu_${prob}_$v.txt 2>&1
    echo "$prob $v rc=$? $(grep -E 'Duration|SM Active Cycles|Elapsed Cycles|gmma_cycles_active|Grid Size|Stall|dram__bytes|lts__t_bytes|inst_executed' $r/ncu_${prob}_$v.txt | sed -E 's/ +/ /g' | tr '\n' '|') $(( $(date +%s) - t0 )) s"
  done
done
cd $out && tar czf x3.tar.gz r && rm -rf r
