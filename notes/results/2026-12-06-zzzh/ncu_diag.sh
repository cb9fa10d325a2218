#!/bin/bash
# (zzzh) ncu of the forward kernel on main (flexjit_g2) for where the diagonal values' time goes:
# noop d128 against the T5 bucket d128 (non-causal) and causal d64 against the per-head relative
# table's causal d64 (294 against 468 TF/s); per-SASS stall samples exported for each.
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
for prob in ${PROBS:-noop_d128 t5_bucket_d128 causal_d64 relbias_head_causal_d64}; do n=fwd
  FLEXJIT_CACHE_DIR=/tmp/fcd timeout 100 /usr/local/cuda/bin/ncu --set full --import-source yes -k regex:attention_fwd -c 1 -f \
    -o $r/${prob}_$n ./flexjit_g2 bench --suite all.json --only $prob --no-bwd > $r/${prob}_$n.log 2>&1
  echo "ncu $prob $n rc=$? $(( $(date +%s) - t0 )) s"
  /usr/local/cuda/bin/ncu --import $r/${prob}_$n.ncu-rep --page details > $r/${prob}_$n.txt 2>&1
  /usr/local/cuda/bin/ncu --import $r/${prob}_$n.ncu-rep --page raw --csv > $r/${prob}_$n.raw.csv 2>&1
  /usr/local/cuda/bin/ncu --import $r/${prob}_$n.ncu-rep --page source --csv --print-source sass > $r/${prob}_$n.sass.csv 2>&1
done
grep -hE "Duration|Registers Per|Issue Slots Busy|No Eligible|Warp Cycles Per Issued" $r/*.txt
ls -la $r | head -30
(cd /tmp && tar czf $out/ncud.tar.gz --exclude='*.ncu-rep' ncudr)
