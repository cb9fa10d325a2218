#!/usr/bin/env bash
# Session (t) t8: buffer reads with 32-bit offsets (KernelSpec::buffer_offsets_32, set per call
# when every buffer the mods read is non-empty and fits 31-bit offsets). base: main with the
# review commit (64-bit reads only); new: the working tree. Three interleaved rounds, order
# alternating: forward on the buffer-reading problems, forward + backward on three of them. Then
# the GPU tests that read buffers (both forms) and memcheck on the new forward test.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="base new"; R="1 2 3"
for round in $R; do
  order=$V; [ $((round % 2)) = 0 ] && order=$(echo $V | awk '{print $2, $1}')
  for v in $order; do
    bin=./flexjit; [ $v = base ] && bin=./flexjit_base
    export FLEXJIT_CACHE_DIR=/tmp/fct8_$v
    f=$r/${v}_$round.jsonl
    timeout 60 $bin bench --suite suite.json --only document_causal_d128,document_nested_causal_d128,long_document_causal_d128,relpos_learnable_causal_d64,alibi_causal_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 90 $bin bench --suite suite.json --only document_causal_d128,relpos_learnable_causal_d128,document_nested_causal_d128 --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 30 $bin bench --suite suite64x.json --only document_causal_d64 --no-bwd --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b $f.c > $f
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$V" "$R" <<'PY' | tee $r/summary.txt
import json, sys, statistics
d = sys.argv[1]; V = sys.argv[2].split(); R = sys.argv[3].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j:
                key = j["name"] + (" (fwd+bwd run)" if "bwd_tflops" in j and j.get("bwd_tflops") else "")
                out[key] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in R] for v in V}
a, b = V
for metric in ("fwd_tflops", "bwd_tflops"):
    print(f"{metric:40} " + " ".join(f"{v:>16}" for v in V) + f"  median {b}/{a}  up")
    for n in runs[a][0]:
        if not runs[a][0][n].get(metric): continue
        cells, med, per = [], {}, {}
        for v in V:
            x = [y.get(n, {}).get(metric) or 0 for y in runs[v]]
            per[v] = x; med[v] = statistics.median(x)
            cells.append("/".join(f"{y:.0f}" for y in x).rjust(16))
        wins = sum(c > p for p, c in zip(per[a], per[b]))
        print(f"{n:40} " + " ".join(cells) + f"  {med[b] / max(med[a], 1):.3f}  {wins}/{len(R)}")
PY
echo "bench $(( $(date +%s) - t0 )) s"
export FLEXJIT_CACHE_DIR=/tmp/fct8_t
timeout 240 ./gpu_test_attention --gtest_filter='FwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:FwdGpu.OutOfBoundsReadsThroughReversedViewsAreReported:FwdGpu.GuardedBufferReadsAreNotReported:FwdGpu.OutOfBoundsBufferReadsAreReported:BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets:FwdGpu.SuiteMods:BwdGpu.SuiteMods:BufferGradGpu.*:ErrorWordsGpu.*:SeqLensGpu.MmaSyncIndirectBufferMask:DecodeGpu.ModsReadLengthsBuffersAndParams' > $r/t_tests.txt 2>&1; echo "tests rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_tests.txt | tr '\n' ' ') last: $(grep -E '^\[ +(OK|FAILED) ' $r/t_tests.txt | tail -1)"
grep -B2 -A10 Failure $r/t_tests.txt | head -30
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 ./gpu_test_attention --gtest_filter='FwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets' > $r/san_memcheck.txt 2>&1; echo "memcheck rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $r/san_memcheck.txt | tr '\n' ' ')"
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
