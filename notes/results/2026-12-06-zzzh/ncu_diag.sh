#!/bin/bash
# (zzzh) ncu of the forward and fast dK/dV kernels on main (flexjit_g2): noop d128 against the T5
# bucket d128 (the same shapes, non-causal), for where the diagonal values' time goes; per-SASS
# stall samples exported for the T5 kernels.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/ncud}; r=/tmp/ncudr; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
python3 - <<'PY'
import json
rows = json.load(open("suite.json"))["problems"] + json.load(open("diagonal_tables.json"))["problems"]
json.dump({"problems": rows}, open("all.json", "w"))
PY
t0=$(date +%s)
for prob in noop_d128 t5_bucket_d128; do for k in fwd:attention_fwd dkdv:dkdv; do n=${k%%:*}; rx=${k#*:}
  args=""; [ $n = fwd ] && args="--no-bwd"
  FLEXJIT_CACHE_DIR=/tmp/fcd timeout 120 /usr/local/cuda/bin/ncu --set full --import-source yes -k regex:$rx -c 1 -f \
    -o $r/${prob}_$n ./flexjit_g2 bench --suite all.json --only $prob $args > $r/${prob}_$n.log 2>&1
  echo "ncu $prob $n rc=$? $(( $(date +%s) - t0 )) s"
  /usr/local/cuda/bin/ncu --import $r/${prob}_$n.ncu-rep --page details > $r/${prob}_$n.txt 2>&1
  /usr/local/cuda/bin/ncu --import $r/${prob}_$n.ncu-rep --page raw --csv > $r/${prob}_$n.raw.csv 2>&1
  /usr/local/cuda/bin/ncu --import $r/${prob}_$n.ncu-rep --page source --csv --print-source sass > $r/${prob}_$n.sass.csv 2>&1
done; done
grep -hE "Duration|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" $r/*.txt
ls -la $r
(cd /tmp && tar czf $out/ncud.tar.gz --exclude='*.ncu-rep' ncudr)
