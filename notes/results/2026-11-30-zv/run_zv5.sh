#!/usr/bin/env bash
# (zv) call 5: does any tuned config beat the defaults for the 256-column backward tiles (MLA's 192/128
# padded to 256/128, d192 to 256/256)? flexjit tune --max, then bench with the tuned cache against the
# defaults (FLEXJIT_AUTOTUNE=off), two rounds.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zv5}; r=/tmp/zv5r/r; mkdir -p $r $out
save() { (cd /tmp/zv5r && tar czf $out/zv5.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
P=mla_causal_d192_dv128,causal_d192,noop_d192
export FLEXJIT_CACHE_DIR=/tmp/fc_t
timeout 330 ./flexjit tune --max --suite head_dims_192.json --only $P > $r/tune.log 2>&1 || tail -5 $r/tune.log
grep -i -E 'bwd|dkdv|chose|config' $r/tune.log | head -30
echo "tune $(( $(date +%s) - t0 )) s"
save
for rd in 1 2; do
  FLEXJIT_AUTOTUNE=off timeout 60 ./flexjit bench --suite head_dims_192.json --only $P --json $r/off_$rd.jsonl > $r/off_$rd.log 2>&1
  FLEXJIT_AUTOTUNE=on timeout 60 ./flexjit bench --suite head_dims_192.json --only $P --json $r/on_$rd.jsonl > $r/on_$rd.log 2>&1
done
python3 - $r <<'PY'
import json, sys
r = sys.argv[1]
for f in ("off_1", "on_1", "off_2", "on_2"):
    for line in open(f"{r}/{f}.jsonl"):
        o = json.loads(line)
        if "name" in o:
            print(f, o["name"], o["fwd_tflops"], o["bwd_tflops"], o.get("fwd_config"), o.get("bwd_configs"))
PY
echo "total $(( $(date +%s) - t0 )) s"
save
