#!/bin/bash
# (zzzp) Which form (full or lean) and how many spill bytes each fast / ordered dK/dV kernel of the
# suite's mods gets from ptxas, as `flexjit emit` compiles it: run with main's binary and a branch's, diff.
# survey.sh BIN: emit the fast/ordered dK/dV kernels of the suite's mods and print ptxas' resources
BIN=$1
export FLEXJIT_CACHE=off
unset FLEXJIT_TEMPLATE_DIR
run() { local name=$1; shift; local out; out=$($BIN emit --family bwd_dkdv --format cubin -o /tmp/hoist/s_$name.cubin "$@" 2>&1); printf "%-22s %s | %s\n" "$name" "$(echo "$out" | grep -o '[0-9]* bytes spill stores' | head -1)" "$(echo "$out" | grep -o 'lean_registers=1' | head -1)"; }
for mode in --fast-dq --ordered-dq; do
  m=${mode#--}; m=${m%-dq}
  run ${m}_causal128 $mode --mask "q_idx >= kv_idx" --head-dim 128 --divisible
  run ${m}_noop128 $mode --head-dim 128 --divisible --no-block-mask
  run ${m}_alibi128 $mode --mask "q_idx >= kv_idx" --score "score + slope[h] * (kv_idx - q_idx)" --buffer slope:f32:? --head-dim 128 --divisible
  run ${m}_softcap128 $mode --mask "q_idx >= kv_idx" --score "30.0 * tanh(score / 30.0)" --head-dim 128 --divisible
  run ${m}_docs128 $mode --mask "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx" --buffer doc:i32:? --head-dim 128 --divisible
  run ${m}_window128 $mode --mask "q_idx >= kv_idx && q_idx - kv_idx <= 1024" --head-dim 128 --divisible
  run ${m}_gqa128 $mode --mask "q_idx >= kv_idx" --head-dim 128 --gqa 4 --divisible
  run ${m}_causal128nd $mode --mask "q_idx >= kv_idx" --head-dim 128
  run ${m}_causal64 $mode --mask "q_idx >= kv_idx" --head-dim 64 --divisible
  run ${m}_noop64 $mode --head-dim 64 --divisible --no-block-mask
  run ${m}_alibi64 $mode --mask "q_idx >= kv_idx" --score "score + slope[h] * (kv_idx - q_idx)" --buffer slope:f32:? --head-dim 64 --divisible
  run ${m}_causal256 $mode --mask "q_idx >= kv_idx" --head-dim 256 --divisible
  run ${m}_bias128 $mode --score "score + bias[h][q_idx][kv_idx]" --buffer bias:f32:?x?x? --head-dim 128 --no-block-mask
done
