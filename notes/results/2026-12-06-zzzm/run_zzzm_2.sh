#!/usr/bin/env bash
# (zzzm) call 2 (carry .gpu/zzzm2): the seed's lead from one helper (branch seed-lead, f618ead):
#  1. its GPU tests (every diagonal-table test, forward and backward, and the ragged seeded ones)
#     and memcheck / synccheck of BwdGpu.DiagonalTableOnePerHeadDim;
#  2. A/B main / seed-lead on the seeded d64 rows (whole backward, 3 rounds);
#  3. main's hdim 256 rows (B=2) beside cuDNN, FA2 and FlexAttention (peers.py, no --flash);
#  4. ncu of main's dK/dV kernel on noop d128 and long causal d128 (per FLOP long causal's kernel
#     is ~5 % slower: where).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzzm2}; r=/tmp/zzzm2r/r; mkdir -p $r $out
save() { (cd /tmp/zzzm2r && tar czf $out/zzzm2.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fj_t timeout 150 ./gta --gtest_filter='BwdGpu.ScoreDiagonal*:BwdGpu.DiagonalTable*:SeqLensGpu.ScoreDiagonal*:FwdGpu.ScoreDiagonal*:FwdGpu.DiagonalTable*' > $r/tests.txt 2>&1
echo "tests rc=$? $(( $(date +%s) - t0 )) s"
grep -hE "^\[ +(OK|FAILED) |Failure|PASSED|FAILED TEST" $r/tests.txt | head -30
for tool in memcheck synccheck; do
  FLEXJIT_CACHE_DIR=/tmp/fj_$tool timeout 80 /usr/local/cuda/bin/compute-sanitizer --tool $tool --kernel-name kns=attention_bwd_dkdv \
    ./gta --gtest_filter='BwdGpu.DiagonalTableOnePerHeadDim' > $r/$tool.txt 2>&1
  echo "$tool rc=$? $(grep -h 'ERROR SUMMARY' $r/$tool.txt) $(( $(date +%s) - t0 )) s"
done
save
OUT=$r bash ab2.sh seedab seed_d64.json bwd_ms 110 3 "" main:./flexjit_main:: lead:./flexjit:: 2>&1 | grep -v "^seedab "
echo "A/B $(( $(date +%s) - t0 )) s"
save
export FLEXJIT_CACHE_DIR=/tmp/fc_p
timeout 60 ./flexjit_main bench --suite hd256.json --json $r/hd256.jsonl > $r/hd256.log 2>&1
timeout 100 python3 peers.py --suite hd256.json > $r/hd256_peers.jsonl 2> $r/hd256_peers.err || tail -3 $r/hd256_peers.err
timeout 60 ./flexjit_main bench --suite hd256.json --json $r/hd256_r2.jsonl > $r/hd256_r2.log 2>&1
python3 - $r <<'PY'
import json, sys, os
r = sys.argv[1]
def rows(f):
    out = []
    if os.path.exists(f):
        for l in open(f):
            if l.startswith("{") and '"name"' in l: out.append(json.loads(l))
    return out
a = {o["name"]: o for o in rows(f"{r}/hd256.jsonl")}; b = {o["name"]: o for o in rows(f"{r}/hd256_r2.jsonl")}
peers = {}
for o in rows(f"{r}/hd256_peers.jsonl"): peers.setdefault(o["name"], {})[o["system"]] = o
for n, o in a.items():
    ps = " ".join(f"{s} {v.get('fwd_tflops')}/{v.get('bwd_tflops')}" for s, v in sorted(peers.get(n, {}).items()))
    print(f"{n:14s} fwd {o.get('fwd_tflops', 0):6.1f} / {b.get(n, {}).get('fwd_tflops', 0):6.1f}  bwd {o.get('bwd_tflops', 0):6.1f} / {b.get(n, {}).get('bwd_tflops', 0):6.1f} | {ps}")
PY
echo "hd256 $(( $(date +%s) - t0 )) s"
save
for p in noop_d128 long_causal_d128; do
  left=$(( 560 - ($(date +%s) - t0) )); [ $left -lt 40 ] && break
  FLEXJIT_CACHE_DIR=/tmp/fcn timeout $left ncu --kernel-name flexjit_attention_bwd_dkdv --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section LaunchStats \
    --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__cycles_active.max,gpc__cycles_elapsed.max,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,sm__inst_executed_pipe_xu.sum,smsp__pcsamp_sample_count.sum \
    -o $r/rep_$p ./flexjit_main bench --suite suite.json --only $p > $r/ncu_$p.log 2>&1
  echo "ncu $p rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$p.ncu-rep --print-details all > $r/details_$p.txt 2>&1
  grep -E 'Duration|gmma|Issue Slots Busy|SM Frequency|cycles_active|cycles_elapsed|wavefronts|inst_executed|Warp Cycles Per Issued|Stall (Wait|Long|Barrier|GMMA|Short|Dispatch|Math|MIO)' $r/details_$p.txt | head -24
  save
done
echo "all $(( $(date +%s) - t0 )) s"
save
