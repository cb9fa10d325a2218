#!/bin/bash
# ptxas spills of the fast dK/dV kernel: buffer offsets 64/32 x statistics pairs on (embedded templates) / off (tv_nopairs)
E=/work/main/build/flexjit
run() { d=$1; bo=$2; tv=$3; shift 3
  FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE=off $E emit --family bwd_dkdv --fast-dq --head-dim $d --buffer-offsets $bo "$@" --format cubin -o /tmp/ps.cubin 2>&1 | head -1 | grep -o '[0-9]* bytes spill stores, [0-9]* bytes spill loads' | sed 's/ bytes spill stores, /\//; s/ bytes spill loads//'; }
cls() { name=$1; shift
  for d in 64 128; do
    line="$name d$d:"
    for bo in 64 32; do for tv in "" /tmp/tv_nopairs; do line="$line $bo$([ -z "$tv" ] && echo +pairs || echo -pairs) $(run $d $bo "$tv" "$@")"; done; done
    echo "$line"
  done; }
cls "bias[h][q][kv] causal" --score "score + bias[h][q_idx][kv_idx]" --mask "q_idx >= kv_idx" --buffer bias:f32:?x?x?
cls "bias[q][kv] causal" --score "score + bias[q_idx][kv_idx]" --mask "q_idx >= kv_idx" --buffer bias:f32:?x?
cls "rel[h][kv-q] causal" --score "score + rel[h][kv_idx - q_idx + 4096]" --mask "q_idx >= kv_idx" --buffer rel:f32:?x?
cls "rel[kv-q] causal" --score "score + rel[kv_idx - q_idx + 4096]" --mask "q_idx >= kv_idx" --buffer rel:f32:?
cls "alibi causal" --score "score + slope[h] * (kv_idx - q_idx)" --mask "q_idx >= kv_idx" --buffer slope:f32:?
cls "bias[q][kv] + documents" --score "score + bias[q_idx][kv_idx]" --mask "doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx" --buffer bias:f32:?x? --buffer doc:i32:?
