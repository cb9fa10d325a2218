#!/usr/bin/env bash
# Session (q) q6: (a) the ticket sections' balance, 2 / 4 (committed) / 8 tiles per CTA, on the
# masked problems; (b) 80-key tiles for the unmasked d256 forward (FA3's shape; O then goes out
# from registers) against the default m128n64w8s2ws; two interleaved rounds, forward only;
# (c) ncu: SM active cycles and tensor-pipe use of noop / causal d128 and causal d256.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/q6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
V="bal2 bal4 bal8"
for round in 1 2; do
  for v in $V; do
    bin=./flexjit_$v; [ $v = bal4 ] && bin=./flexjit
    export FLEXJIT_CACHE_DIR=/tmp/fc_$v
    f=$r/${v}_$round.jsonl
    timeout 120 $bin bench --suite suite.json --only causal_d128,gqa_causal_d128,causal_d64,alibi_causal_d128,document_causal_d128,prefix_lm_d128,sliding_window_d128,long_causal_d128,softcap_causal_d128 --no-bwd --json $f.a > $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 60 $bin bench --suite suite256x.json --only causal_d256,gqa_causal_d256,document_causal_d256 --no-bwd --json $f.b >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    timeout 60 $bin bench --suite suite64x.json --only gqa_causal_d64,sliding_window_d64 --no-bwd --json $f.c >> $r/${v}_$round.log 2>&1 || tail -2 $r/${v}_$round.log
    cat $f.a $f.b $f.c > $f
  done
  export FLEXJIT_CACHE_DIR=/tmp/fc_bal4
  for c in default m128n80w8s2ws; do
    arg=""; [ $c = default ] || arg="--config $c"
    timeout 90 ./flexjit bench --suite sweep.json --only noop_d256_b2_s4096,noop_d256_b8_s2048,noop_d256_b1_s8192 --no-bwd $arg --json $r/n80_${c}_$round.jsonl > $r/n80_${c}_$round.log 2>&1 || tail -2 $r/n80_${c}_$round.log
  done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
python3 - $r "$V" <<'PY' | tee $r/summary.txt
import json, sys
d = sys.argv[1]; V = sys.argv[2].split()
def load(f):
    out = {}
    try:
        for l in open(f):
            try: j = json.loads(l)
            except Exception: continue
            if "name" in j: out[j["name"]] = j
    except FileNotFoundError: pass
    return out
runs = {v: [load(f"{d}/{v}_{i}.jsonl") for i in (1, 2)] for v in V}
print(f"{'problem':28} " + " ".join(f"{v:>12}" for v in V))
for n in runs["bal4"][0]:
    cells = []
    for v in V:
        a = [x.get(n, {}).get("fwd_tflops") or 0 for x in runs[v]]
        cells.append(f"{a[0]:5.0f}/{a[1]:<5.0f}")
    b = sum(x.get(n, {}).get("fwd_tflops") or 0 for x in runs["bal4"])
    rat = " ".join(f"{sum(x.get(n, {}).get('fwd_tflops') or 0 for x in runs[v]) / max(b, 1):.3f}" for v in V)
    print(f"{n:28} " + " ".join(cells) + "  x " + rat)
n80 = {c: [load(f"{d}/n80_{c}_{i}.jsonl") for i in (1, 2)] for c in ("default", "m128n80w8s2ws")}
for n in n80["default"][0]:
    a = [x.get(n, {}).get("fwd_tflops") or 0 for x in n80["default"]]; b = [x.get(n, {}).get("fwd_tflops") or 0 for x in n80["m128n80w8s2ws"]]
    print(f"{n:28} n64 {a[0]:.0f}/{a[1]:.0f}  n80 {b[0]:.0f}/{b[1]:.0f}  x {sum(b)/max(sum(a),1):.3f}")
PY
export FLEXJIT_CACHE_DIR=/tmp/fc_bal4
m=gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__cycles_elapsed.avg,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__bytes_read.sum
for p in noop_d128_b4_s4096 causal_d128_b4_s4096 causal_d256_b2_s4096 noop_d256_b2_s4096; do
  timeout 60 ncu --kernel-name regex:flexjit_attention_fwd --launch-skip 2 --launch-count 1 --metrics $m ./flexjit bench --suite sweep.json --only $p --no-bwd > $r/ncu_$p.txt 2>&1; echo "$p rc=$?"; grep -E "gpu__|sm__|lts__|dram__" $r/ncu_$p.txt
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
