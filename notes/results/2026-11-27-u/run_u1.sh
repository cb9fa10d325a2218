#!/usr/bin/env bash
# Session (u) u1: A/B on one H100, interleaved rounds, order alternating.
#  base:   the dK/dV templates of main d84bae1 (FLEXJIT_TEMPLATE_DIR=tmpl_base) on the new binary
#  new:    the dQ staging offsets recomputed per tile (no hoisted, spilled column offsets)
#  new32:  new + the fast dK/dV kernel with 32-bit buffer reads (binary flexjit_dkdv32)
# Then decode and forward with 32-bit reads (new) against flexjit_read_32 forwarding to the
# 64-bit read (read64 templates) on the decode problems that read buffers.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/u1}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
run_variant() {  # variant round
  local v=$1 round=$2 bin=./flexjit
  unset FLEXJIT_TEMPLATE_DIR
  case $v in
    base) export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_base ;;
    new32) bin=./flexjit_dkdv32 ;;
    read64) export FLEXJIT_TEMPLATE_DIR=$PWD/tmpl_read64 ;;
  esac
  export FLEXJIT_CACHE_DIR=/tmp/fcu1  # one cache: its keys hold the rendered source
  local f=$r/${v}_$round.jsonl
  if [ $v = read64 ] || [ $v = dec32 ]; then
    timeout 100 $bin bench --suite suite.json --only decode_documents_b16_kv32k,decode_spec4_documents_b16_kv32k,decode_sliding_alibi_b16_kv32k,decode_b16_kv32k --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a > $f; return
  fi
  timeout 200 $bin bench --suite suite.json --only document_causal_d128,document_nested_causal_d128,long_document_causal_d128,causal_d128,gqa_causal_d128 --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
  timeout 60 $bin bench --suite suite64x.json --only document_causal_d64,causal_d64 --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
  FLEXJIT_DETERMINISTIC=1 timeout 90 $bin bench --suite suite.json --only document_causal_d128,causal_d128 --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
  sed 's/"name": "\([^"]*\)"/"name": "\1 det"/' $f.c > $f.cd
  cat $f.a $f.b $f.cd > $f
}
summary() {  # variants rounds metrics
python3 - $r "$1" "$2" "$3" <<'PY'
import json, sys, statistics
d = sys.argv[1]; V = sys.argv[2].split(); R = sys.argv[3].split(); M = sys.argv[4].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in R] for v in V}
a = V[0]
for metric in M:
    print(f"{metric:34} " + " ".join(f"{v:>14}" for v in V) + "  " + " ".join(f"{v}/{a}" for v in V[1:]))
    for n in runs[a][0]:
        if not runs[a][0][n].get(metric): continue
        cells, med = [], {}
        for v in V:
            x = [y.get(n, {}).get(metric) or 0 for y in runs[v]]
            med[v] = statistics.median(x)
            cells.append("/".join(f"{y:.0f}" for y in x).rjust(14))
        print(f"{n:34} " + " ".join(cells) + "  " + " ".join(f"{med[v] / max(med[a], 1e-9):.3f}" for v in V[1:]))
PY
}
for round in 1 2; do
  order="base new new32"; [ $round = 2 ] && order="new32 new base"
  for v in $order; do run_variant $v $round; done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
summary "base new new32" "1 2" "bwd_tflops fwd_tflops" | tee $r/summary_bwd.txt
for round in 1 2; do
  order="read64 dec32"; [ $round = 2 ] && order="dec32 read64"
  for v in $order; do run_variant $v $round; done
done
summary "read64 dec32" "1 2" "fwd_gbps fwd_ms" | tee $r/summary_decode.txt
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
