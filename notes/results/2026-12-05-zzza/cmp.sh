#!/bin/bash
# (zzza) Compiles a set of fast-backward dK/dV kernels (sm_90a) under each template arm and prints
# the spill-store bytes, ptxas warnings and errors per arm. Usage: cmp.sh ARM_DIR... (each holding
# templates/); needs build/flexjit.
export PATH=/usr/local/cuda/bin:$PATH
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
cases=(
"--head-dim 128"
"--head-dim 128 --mask q_idx>=kv_idx"
"--head-dim 128 --score tanh(score/30)*30 --mask q_idx>=kv_idx"
"--head-dim 128 --gqa 4 --mask q_idx>=kv_idx"
"--head-dim 128 --mask doc[q_idx]==doc[kv_idx]&&q_idx>=kv_idx --buffer doc:i32:?"
"--head-dim 128 --score score+slope[h]*(kv_idx-q_idx) --buffer slope:f32:? --mask q_idx>=kv_idx"
"--head-dim 128 --config m64n64w4s2ws"
"--head-dim 64"
"--head-dim 64 --mask q_idx>=kv_idx"
"--head-dim 64 --config m64n128w8s2ws --mask doc[q_idx]==doc[kv_idx]&&q_idx>=kv_idx --buffer doc:i32:?"
"--head-dim 96"
"--head-dim 256 --mask q_idx>=kv_idx"
"--head-dim 128 --seq-lens"
"--head-dim 128 --ordered-dq --mask q_idx>=kv_idx"
"--head-dim 64 --config m64n64w4s2ws"
"--head-dim 64 --score tanh(score/30)*30 --mask q_idx>=kv_idx"
"--head-dim 128 --gqa 8 --mask q_idx>=kv_idx"
"--head-dim 128 --mask kv_idx<=512||q_idx>=kv_idx"
"--head-dim 128 --mask q_idx>=kv_idx&&q_idx-kv_idx<=1024"
"--head-dim 128 --score score+bias[h][q_idx][kv_idx] --buffer bias:bf16:?x?x?"
"--head-dim 128 --head-dim-v 64"
"--head-dim 80"
"--head-dim 192 --head-dim-v 128 --mask q_idx>=kv_idx"
"--head-dim 128 --seq-lens --mask q_idx>=kv_idx"
"--head-dim 64 --seq-lens"
)
for c in "${cases[@]}"; do
  line="$(printf '%-90s' "$c")"
  for a in "$@"; do
    r=$(FLEXJIT_CACHE=off FLEXJIT_TEMPLATE_DIR=$a/templates ./build/flexjit emit --family bwd_dkdv --fast-dq $c --format cubin -o /tmp/cmp_$(basename $a).cubin 2>&1)
    sp=$(echo "$r" | grep -o "[0-9]* bytes spill stores" | head -1 | cut -d' ' -f1)
    w=$(echo "$r" | grep -c "warning")
    e=$(echo "$r" | grep -c "error")
    line="$line | $(basename $a) sp=${sp:-?} w=$w e=$e"
  done
  echo "$line"
done
