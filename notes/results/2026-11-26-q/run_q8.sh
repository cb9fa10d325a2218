#!/usr/bin/env bash
# Session (q) q8: where the fast backward's dK/dV kernel spends its time: ncu's SM active cycles
# (min / avg / max against elapsed: the tail), tensor-pipe use, L2 hit rate, on noop, causal and
# GQA causal d128 and causal d256.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=/tmp/fc FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
timeout 60 ./flexjit bench --suite suite.json --only noop_d128,causal_d128,gqa_causal_d128,noop_d64,causal_d64 --json $r/bench.jsonl > $r/bench.log 2>&1 || tail -2 $r/bench.log
timeout 60 ./flexjit bench --suite suite256x.json --only noop_d256,causal_d256 --json $r/bench256.jsonl > $r/bench256.log 2>&1 || tail -2 $r/bench256.log
grep -h tflops $r/bench.jsonl $r/bench256.jsonl | python3 -c "import sys,json; [print(j['name'], j.get('fwd_tflops'), j.get('bwd_tflops'), j.get('bwd_mode')) for j in map(json.loads, sys.stdin)]"
m=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__cycles_elapsed.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active
for p in noop_d128 causal_d128 gqa_causal_d128 causal_d64; do
  timeout 60 ncu --kernel-name regex:flexjit_attention_bwd_dkdv --launch-skip 2 --launch-count 1 --metrics $m ./flexjit bench --suite suite.json --only $p > $r/ncu_$p.txt 2>&1; echo "$p rc=$?"; grep -E "gpu__|sm__|lts__|dram__|launch__" $r/ncu_$p.txt
done
p=causal_d256
timeout 60 ncu --kernel-name regex:flexjit_attention_bwd_dkdv --launch-skip 2 --launch-count 1 --metrics $m ./flexjit bench --suite suite256x.json --only $p > $r/ncu_$p.txt 2>&1; echo "$p rc=$?"; grep -E "gpu__|sm__|lts__|dram__|launch__" $r/ncu_$p.txt
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
