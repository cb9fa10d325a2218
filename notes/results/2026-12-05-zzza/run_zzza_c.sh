#!/bin/bash
# (zzza) prepared, not run. Optional call 5 (carry .gpu/zzza; about 550 s), a measurement, not a
# candidate: bias tables and nested document reads a user brings (bias_tables.json: kb[b][kv_idx],
# hb[h][kv_idx], relh[h][kv_idx - q_idx + 4096], a per-document prefix through start[doc[kv_idx]]),
# whose kernels spill on the CPU (ptxas, main: the forward 112-944 bytes, the fast dK/dV kernel
# 360 under the prefix mask; the suite's mods 0-12).
# 1. Arm S's buffer-read tests against float64 (gta_S, the branch score-reads-select-address: with
#    32-bit offsets the score_mod's reads select the address before the load, the mask_mod's the
#    value after it).
# 2. main against tv_NO (main's forward without the overlap where the mods read buffers) and S
#    (flexjit_S; on the CPU the forward's spills beside relh fall 540 -> 8 bytes at d128 and
#    944 -> 76 at d64, kb's 168 -> 16, T5 buckets' 336 -> 108, qb[b][q_idx]'s rise 0 -> 44, the
#    masks' stay), rounds alternating, forward and fast backward (the metric is the forward's ms).
# 3. FlexAttention (Triton) and the SDPA peers on the same problems (no --flash: FA4 is not
#    installed in this call): is flexjit ahead on them?
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzac}; r=/tmp/zzzacr/r; mkdir -p $r $out
save() { (cd /tmp/zzzacr && tar czf $out/zzzac.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
# SKIP_TESTS_S=1 where call 1 ran them (run_zzza_a.sh with WITH_S=1).
[ "${SKIP_TESTS_S:-0}" = 1 ] || FLEXJIT_CACHE_DIR=/tmp/fct_s FLEXJIT_AUTOTUNE=off timeout 150 ./gta_S \
  --gtest_filter='*BufferReadsWithThirtyTwoAndSixtyFourBitOffsets*:ErrorWordsGpu.*:BufferGradGpu.*:FwdGpu.SuiteMods:BwdGpu.SuiteMods' \
  > $r/tests_S.txt 2>&1; echo "tests_S rc=$? $(grep -cE '^\[       OK' $r/tests_S.txt) ok $(grep -cE '^\[  FAILED' $r/tests_S.txt) failed"
bash ab2.sh zk bias_tables.json fwd_ms 200 3 "" main:./flexjit: NO:./flexjit:$PWD/tv_NO/templates \
  S:./flexjit_S: 2>&1 | grep -v "^zk "
cp /tmp/zkr/r/ab.txt $r/ab_bias_tables.txt 2>/dev/null; cp /tmp/zkr/r/*.jsonl $r/ 2>/dev/null
save
timeout 120 python3 peers.py --no-bwd --suite bias_tables.json > $r/peers_bias_tables.jsonl 2> $r/peers_bias_tables.err || tail -3 $r/peers_bias_tables.err
grep -h '"name"' $r/peers_bias_tables.jsonl | python3 -c "import sys, json; [print(o['system'], o['name'], o.get('fwd_tflops'), o.get('bwd_tflops')) for o in map(json.loads, sys.stdin)]"
echo "done $(( $(date +%s) - t0 )) s"; save
