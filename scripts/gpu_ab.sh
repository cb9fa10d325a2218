#!/usr/bin/env bash
# A/B timing for the device machine: `flexjit bench` on the named problems under several setups,
# interleaved round by round (A B C A B C ...), each run a fresh process, so clock and thermal
# drift fall on every setup alike. A setup is NAME=BINARY or NAME=BINARY:TEMPLATE_DIR (the
# templates a binary renders can be swapped with FLEXJIT_TEMPLATE_DIR, which isolates a kernel
# change from a host-side one). All setups share one kernel cache.
#   bash scripts/gpu_ab.sh PROBLEMS ROUNDS SETUP... [-- extra bench flags]
# Prints one line per (round, setup, problem): fwd and bwd TF/s and the configs.
set -u
problems=$1 rounds=$2
shift 2
setups=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do setups+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_CACHE_DIR=${FLEXJIT_CACHE_DIR:-$(mktemp -d)}
for round in $(seq 1 "$rounds"); do
  for setup in "${setups[@]}"; do
    name=${setup%%=*} rest=${setup#*=}
    binary=${rest%%:*} templates=
    [ "$binary" != "$rest" ] && templates=${rest#*:}
    tmp=$(mktemp)
    if [ -n "$templates" ]; then
      FLEXJIT_TEMPLATE_DIR=$templates "$binary" bench --suite bench/suite.json --only "$problems" --json "$tmp" "$@" > /dev/null 2>&1
    else
      "$binary" bench --suite bench/suite.json --only "$problems" --json "$tmp" "$@" > /dev/null 2>&1
    fi || echo "round $round $name: bench failed (exit $?)"
    python3 - "$round" "$name" "$tmp" <<'PY'
import json, sys
round_, name, path = sys.argv[1:4]
for line in open(path):
    r = json.loads(line)
    if 'name' not in r: continue
    print(f"{round_:>2} {name:<8} {r['name']:<27} fwd {r.get('fwd_tflops', 0):6.1f}  bwd {r.get('bwd_tflops', 0):6.1f}"
          f"  bwd_ms {r.get('bwd_ms', 0):7.4f}  [{r.get('fwd_config', '')}; {r.get('bwd_configs', '')}]")
PY
    rm -f "$tmp"
  done
done
