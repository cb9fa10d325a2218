#!/bin/bash
# (zzw) 3: the final rule (1024-CTA groups only where a buffer read at q_idx cuts the walks):
# the half-slab test zzw2 did not reach; flexjit run --check and compute-sanitizer memcheck on a
# documents backward of 1152 CTAs (96 pairs x 6 kv tiles x 2 batches: a group of 170 pairs and one
# of 22); then the A/B against main.
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; r=/tmp/zzw3r/r; mkdir -p $r $out /tmp/in3 /tmp/o3
save() { (cd /tmp/zzw3r && tar czf $out/zzw3_tests.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
python3 gen.py /tmp/in3
(FLEXJIT_CACHE_DIR=/tmp/fct_h timeout 240 ./gta --gtest_filter='BwdGpu.HalfSlabSlicesAtHeadDimsAbove128' > $r/tests_h.txt 2>&1; echo "tests_h rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt) &
run() { ./flexjit run --q /tmp/in3/q.npy --k /tmp/in3/k.npy --v /tmp/in3/v.npy --do /tmp/in3/do.npy --buffer doc=/tmp/in3/doc.npy \
  --mask 'doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx' --out /tmp/o3 "$@"; }
FLEXJIT_CACHE_DIR=/tmp/fcs timeout 200 bash -c "$(declare -f run); run --check" > $r/check.txt 2>&1; echo "check rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt
FLEXJIT_CACHE_DIR=/tmp/fcs timeout 200 compute-sanitizer --tool memcheck --kernel-name kns=attention_bwd_dkdv ./flexjit run --q /tmp/in3/q.npy --k /tmp/in3/k.npy --v /tmp/in3/v.npy --do /tmp/in3/do.npy --buffer doc=/tmp/in3/doc.npy \
  --mask 'doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx' --out /tmp/o3 > $r/memcheck.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s) - t0 )) s" >> $r/rc.txt
wait
cat $r/rc.txt; tail -12 $r/check.txt; tail -4 $r/memcheck.txt; grep -hE "^\[  (PASSED|FAILED) |FAILED  \]|Failure" $r/tests_h.txt
save
bash ab2.sh zzw3 mix3.json bwd_ms 150 3 "" main:./flexjit_main: new:./flexjit: 2>&1 | grep -v "^zzw3 "
echo "done $(( $(date +%s) - t0 )) s"
