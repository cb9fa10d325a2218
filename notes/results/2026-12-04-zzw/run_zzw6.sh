#!/usr/bin/env bash
# (zzw) 6: the document problems (the suite's two, GQA 4:1 documents) in one call: A/B of main's
# binary (f7485fc) against the launch groups' (HEAD), then FlexAttention's Triton and FLASH
# backends (peers.py --flash), after a call that copied .fa4a to /tmp/fa4a (zzv2's pattern).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzw6}; r=/tmp/zzw6r/r; mkdir -p $r $out
save() { (cd /tmp/zzw6r && tar czf $out/zzw6.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
( cd ../.. && timeout 150 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1 &
inst=$!
bash ab2.sh ab6 docs3.json bwd_ms 100 3 "" main:./flexjit_main: new:./flexjit: 2>&1 | grep -v "^ab6 "
echo "ab $(( $(date +%s) - t0 )) s"
save
wait $inst; echo "install: $(tail -1 $r/install.txt)"
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages PYTHONUNBUFFERED=1
left=$(( 330 - ($(date +%s) - t0) ))
timeout $left python3 peers.py --flash --suite docs3.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"
grep '"name"' $r/peers.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
    o=json.loads(l); print(o['name'], o.get('system'), o.get('fwd_tflops'), o.get('bwd_tflops'))"
save
