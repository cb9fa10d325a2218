#!/usr/bin/env bash
# (zq) call 7: the whole forward config space (`flexjit tune --max --no-bwd`) on noop_d64 (0.86x the
# FLASH backend in zq3, the furthest-behind dense row) and noop_d128, then each winner against the
# default in two alternating rounds of `bench --config`. main's binary, H200.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zq7}; r=/tmp/zq7r/r; mkdir -p $r $out
save() { (cd /tmp/zq7r && tar czf $out/zq7.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_t timeout 110 ./flexjit tune --max --no-bwd --suite suite.json --only noop_d64,noop_d128 > $r/tune.log 2>&1; echo "tune rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^noop" $r/tune.log
find /tmp/fc_t -name 'autotune*.json' -exec cp {} $r/ \;
save
export FLEXJIT_AUTOTUNE=off
for p in noop_d64 noop_d128; do
  w=$(grep -E "^$p " $r/tune.log | awk '{print $3}' | head -1)
  [ -z "$w" ] && continue
  for round in 1 2; do
    for c in default $w; do
      [ $round = 2 ] && [ $c = default ] && continue
      args=""; [ $c != default ] && args="--config $c"
      FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 30 ./flexjit bench --no-bwd --suite suite.json --only $p $args --json $r/b_${p}_${c}_r$round.jsonl > /dev/null 2>&1
      echo "$p $c r$round $(grep -o '"fwd_tflops":[0-9.]*' $r/b_${p}_${c}_r$round.jsonl)"
    done
    [ $round = 2 ] && { FLEXJIT_CACHE_DIR=/tmp/fc_b timeout 30 ./flexjit bench --no-bwd --suite suite.json --only $p --json $r/b_${p}_default_r2.jsonl > /dev/null 2>&1; echo "$p default r2 $(grep -o '"fwd_tflops":[0-9.]*' $r/b_${p}_default_r2.jsonl)"; }
  done
done
echo "$(( $(date +%s) - t0 )) s"
save
