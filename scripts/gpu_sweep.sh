#!/usr/bin/env bash
# Times the forward (and with BWD=1 the backward) of suite problems under several block configs:
#   bash scripts/gpu_sweep.sh BUILD_DIR PROBLEMS CONFIG...
# A CONFIG may carry backward configs too: FWD[,DQ,DKDV] (with BWD=1).
# Prints one line per (config, problem) and keeps the JSON lines in $OUT/sweep.jsonl.
set -u
build=$1 problems=$2
shift 2
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp}
bwd_flag=--no-bwd
[ "${BWD:-0}" = 1 ] && bwd_flag=
for config in "$@"; do
  IFS=, read -r fwd dq dkdv <<< "$config"
  extra=()
  [ -n "${dq:-}" ] && extra+=(--dq-config "$dq")
  [ -n "${dkdv:-}" ] && extra+=(--dkdv-config "$dkdv")
  "$build/flexjit" bench --suite bench/suite.json --only "$problems" --config "$fwd" "${extra[@]}" $bwd_flag \
      --json /tmp/sweep.$config.jsonl > /tmp/sweep.$config.log 2>&1 || { echo "$config: FAILED"; tail -3 /tmp/sweep.$config.log; }
  cat /tmp/sweep.$config.jsonl >> "$out/sweep.jsonl" 2>/dev/null
  python3 - "/tmp/sweep.$config.jsonl" "$config" <<'PY'
import json, sys
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for line in lines:
    r = json.loads(line)
    if "name" not in r:
        continue
    bwd = f"  bwd {r['bwd_tflops']:7.1f} TF/s" if "bwd_tflops" in r else ""
    print(f"{sys.argv[2]:40} {r['name']:28} fwd {r['fwd_tflops']:7.1f} TF/s{bwd}")
PY
done
