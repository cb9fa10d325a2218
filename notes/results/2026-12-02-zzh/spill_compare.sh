#!/bin/bash
cd /work/main
run() {
  a=$(FLEXJIT_CACHE=off FLEXJIT_TEMPLATE_DIR=/tmp/tpl_old/templates ./build/flexjit emit --family fwd --arch sm_90a --format cubin -o /tmp/ko.cubin "$@" 2>&1 | head -2 | tr '\n' ' ' | sed -E 's/flexjit_attention_fwd: ([0-9]+) registers, ([0-9]+) bytes stack, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads.*\(fwd/r\1 st\2 sp\3\/\4/;s/wrote.*//' | sed -E 's/score_mod=.*(lean_registers=1)?.*/\1/')
  b=$(FLEXJIT_CACHE=off ./build/flexjit emit --family fwd --arch sm_90a --format cubin -o /tmp/kn.cubin "$@" 2>&1 | head -2 | tr '\n' ' ' | sed -E 's/flexjit_attention_fwd: ([0-9]+) registers, ([0-9]+) bytes stack, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads.*\(fwd/r\1 st\2 sp\3\/\4/;s/wrote.*//' | sed -E 's/score_mod=.*(lean_registers=1)?.*/\1/')
  la=$(grep -c . <<< "$(FLEXJIT_CACHE=off FLEXJIT_TEMPLATE_DIR=/tmp/tpl_old/templates ./build/flexjit emit --family fwd --arch sm_90a --format cubin -o /tmp/ko.cubin "$@" 2>&1 | grep -o lean_registers=1)")
  lb=$(grep -c . <<< "$(FLEXJIT_CACHE=off ./build/flexjit emit --family fwd --arch sm_90a --format cubin -o /tmp/kn.cubin "$@" 2>&1 | grep -o lean_registers=1)")
  tag=same; [ "$a" != "$b" -o "$la" != "$lb" ] && tag=DIFF
  echo "$tag | $* | old: $a lean$la | new: $b lean$lb"
}
mods=('' 'q_idx >= kv_idx' 'q_idx >= kv_idx && q_idx - kv_idx <= 1024' 'kv_idx <= 512 || q_idx >= kv_idx' 'doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx')
for d in 64 128 256; do
 for c in m128n128w8s2ws m128n128w8s3ws m128n64w8s2ws; do
  for m in "${mods[@]}"; do
   extra=(); [ -n "$m" ] && extra=(--mask "$m"); [[ "$m" == *doc* ]] && extra+=(--buffer doc:i32:?)
   run --config $c --head-dim $d "${extra[@]}"
  done
  run --config $c --head-dim $d --score '30 * tanh(score / 30)' --mask 'q_idx >= kv_idx'
  run --config $c --head-dim $d --score 'score + slope[h] * (kv_idx - q_idx)' --buffer slope:f32:? --mask 'q_idx >= kv_idx'
  run --config $c --head-dim $d --score 'score + bias[q_idx][kv_idx]' --buffer bias:f32:?x? --mask 'q_idx >= kv_idx'
  run --config $c --head-dim $d --mask 'q_idx >= kv_idx' --seq-lens
  run --config $c --head-dim $d --mask 'doc[q_idx] == doc[kv_idx] && q_idx >= kv_idx' --buffer doc:i32:? --seq-lens
 done
 run --config m128n128w8s2ws --head-dim $d --mask 'q_idx >= kv_idx' --no-block-mask
 run --config m128n176w8s2ws --head-dim $d --no-block-mask
 run --config m128n128w8s2ws --head-dim $d --gqa 4 --mask 'q_idx >= kv_idx'
done
run --config m128n128w8s2ws --head-dim 192 --head-dim-v 128 --mask 'q_idx >= kv_idx'
run --config m128n128w8s2ws --head-dim 128 --mask 'off[doc[q_idx]] <= kv_idx && doc[q_idx] == doc[kv_idx]' --buffer doc:i32:? --buffer off:i32:?
