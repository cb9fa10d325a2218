#!/bin/bash
# zzt2: the fast dK/dV kernel's buffer reads with 32-bit offsets (flexjit_32, the (zzs) patch)
# against main's 64-bit ones, next_offsets.json, backward ms.
cd "$(dirname "$0")"
bash ab.sh offsets next_offsets.json bwd_ms 250 5 "" main:./flexjit_main: b32:./flexjit_32:
D=$PWD
bash ab.sh pairs next_offsets.json bwd_ms 110 4 "--only bias_hqk_causal_d64_s2048,bias_qk_causal_d64_s2048,relpos_h_causal_d64,relpos_causal_d64" \
  on:./flexjit_main: off:./flexjit_main:$D/tv_nopairs
