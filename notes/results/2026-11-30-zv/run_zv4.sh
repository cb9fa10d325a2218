#!/usr/bin/env bash
# (zv) call 4: the Python package on head dims that are no multiple of 64 (test_gpu_suite.py over
# head_dims.json and head_dims_192.json: autograd against flex_attention and the float64 reference);
# the MLA prefill shape (d192 / dv128) beside the peers; the forward's configs at d192.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv4}; r=/tmp/zv4r/r; mkdir -p $r $out
save() { (cd /tmp/zv4r && tar czf $out/zv4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
python3 -c "import pytest" 2>/dev/null || python3 -m pip install -q --no-index --find-links $PWD/wheels pytest > $r/pip.txt 2>&1
for s in head_dims head_dims_192; do
  (cd python && FLEXJIT_LIBRARY=$PWD/../libflexjit.so FLEXJIT_CACHE_DIR=/tmp/fpy FLEXJIT_SUITE=$PWD/../$s.json PYTHONPATH=$PWD \
     timeout 200 python3 -m pytest -q -rs tests/test_gpu_suite.py > $r/py_$s.log 2>&1; echo "rc=$?" >> $r/py_$s.log) &
done
wait
for s in head_dims head_dims_192; do echo "$s: $(tail -3 $r/py_$s.log | tr '\n' ' ')"; done
grep -h -E 'FAILED|Error' $r/py_*.log | head -20
echo "python $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc_b
timeout 60 ./flexjit bench --suite head_dims_192.json --only mla_causal_d192_dv128,causal_d192 --json $r/mla.jsonl > $r/mla.log 2>&1 || tail -3 $r/mla.log
timeout 100 python3 peers.py --suite head_dims_192.json --only mla_causal_d192_dv128 > $r/peers_mla.jsonl 2> $r/peers_mla.err || tail -3 $r/peers_mla.err
cat $r/mla.jsonl $r/peers_mla.jsonl | grep '"name"' | cut -c1-220
echo "mla $(( $(date +%s) - t0 )) s"
save
for c in default m128n64w8s2ws m128n64w8s3ws m128n128w8s2ws m128n64w8s2g m128n128w8s2g m192n64w12s2ws m128n176w8s2ws; do
  for rd in 1 2; do
    arg="--config $c"; [ $c = default ] && arg=""
    timeout 40 ./flexjit bench --no-bwd --suite head_dims_192.json --only noop_d192,causal_d192 $arg --json $r/cfg_${c}_$rd.jsonl > $r/cfg_${c}_$rd.log 2>&1 || echo "$c: $(tail -1 $r/cfg_${c}_$rd.log | cut -c1-200)"
  done
  echo "$c $(cat $r/cfg_${c}_*.jsonl 2>/dev/null | grep '"name"' | python3 -c "import sys,json; print(' '.join(f\"{json.loads(l)['name']} {json.loads(l)['fwd_tflops']}\" for l in sys.stdin))")"
done
echo "total $(( $(date +%s) - t0 )) s"
save
