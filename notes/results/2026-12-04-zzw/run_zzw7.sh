#!/bin/bash
# (zzw) 7: compute-sanitizer racecheck and synccheck on the dK/dV kernel of zzw3's documents
# backward (1152 CTAs in groups of 170 and 22 pairs), HEAD's build.
cd "$(dirname "$0")"
out=${OUT:-/tmp/out}; r=/tmp/zzw7r/r; mkdir -p $r $out /tmp/in3
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
python3 gen.py /tmp/in3
for tool in racecheck synccheck; do
  mkdir -p /tmp/o_$tool
  FLEXJIT_CACHE_DIR=/tmp/fc_$tool timeout 170 compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv ./flexjit run \
    --q /tmp/in3/q.npy --k /tmp/in3/k.npy --v /tmp/in3/v.npy --do /tmp/in3/do.npy --buffer doc=/tmp/in3/doc.npy \
    --mask 'doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx' --out /tmp/o_$tool > $r/$tool.txt 2>&1 &
done
wait
for tool in racecheck synccheck; do echo "== $tool"; tail -3 $r/$tool.txt; done
(cd /tmp/zzw7r && tar czf $out/zzw7.tar.gz r)
