#!/usr/bin/env bash
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
B=../next_zo/flexjit_ranker
t0=$(date +%s)
one() {  # tag suite only
  FLEXJIT_CACHE_DIR=/tmp/fc3 timeout 40 $B bench --suite ../next_zo/$2 --only $3 --bwd-mode deterministic 2>&1 | grep -v '^{' | grep -v '^problem' | grep -v '^$'
  echo "$1 rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 )) s"
}
one a suite.json noop_d128
one b suite64x.json causal_d64
one c suite.json causal_d128,noop_d128
one d suite.json noop_d128,causal_d128
