#!/usr/bin/env bash
# Session (u) u8: the landed build beside FlexAttention (Triton) on the buffer-reading problems
# (forward and backward, decode), one run; then the fixed decode buffer test and compute-sanitizer.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/u8}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fcu8
t0=$(date +%s)
only=document_causal_d128,document_nested_causal_d128,long_document_causal_d128,alibi_causal_d128,decode_documents_b16_kv32k,decode_spec4_documents_b16_kv32k
timeout 120 ./flexjit bench --suite suite.json --only $only --json $r/flexjit.jsonl > $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
timeout 40 ./flexjit bench --suite suite64x.json --only document_causal_d64 --json $r/flexjit64.jsonl >> $r/flexjit.log 2>&1 || tail -3 $r/flexjit.log
echo "flexjit $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 200 python3 peers.py --no-sdpa --suite suite.json --only "$only" > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
PYTHONUNBUFFERED=1 timeout 60 python3 peers.py --no-sdpa --suite suite64x.json --only document_causal_d64 > $r/peers64.jsonl 2>> $r/peers.err || tail -3 $r/peers.err
echo "peers $(( $(date +%s) - t0 )) s"
cat $r/flexjit.jsonl $r/flexjit64.jsonl > $r/flexjit_all.jsonl; cat $r/peers.jsonl $r/peers64.jsonl > $r/peers_all.jsonl
python3 compare.py $r/flexjit_all.jsonl $r/peers_all.jsonl 2>&1 | tee $r/compare.txt | tail -20
export FLEXJIT_CACHE_DIR=/tmp/fcu8t
timeout 60 ./gpu_test_attention --gtest_filter='DecodeGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets' > $r/t_decode.txt 2>&1; echo "decode test rc=$? $(( $(date +%s) - t0 )) s $(grep -E '^\[  (PASSED|FAILED)' $r/t_decode.txt | tr '\n' ' ')"; grep -A6 Failure $r/t_decode.txt | head -20
san() {  # tool filter timeout
  timeout $3 compute-sanitizer --tool $1 --error-exitcode 1 ./gpu_test_attention --gtest_filter="$2" > $r/san_$1_${2//[^A-Za-z]/_}.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - t0 )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $r/san_$1_${2//[^A-Za-z]/_}.txt | tr '\n' ' ')"
}
san memcheck DecodeGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets 60
san memcheck BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets 100
san racecheck BwdGpu.BufferReadsWithThirtyTwoAndSixtyFourBitOffsets 150
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
