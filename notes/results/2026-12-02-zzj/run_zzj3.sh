#!/bin/bash
# zzj3: where a short causal forward + backward spends its time, kernel by kernel, flexjit against
# SDPA's cuDNN (ncu at the GPU's own clocks: durations and DRAM bytes of each kernel of the last
# iterations).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzj3}; r=/tmp/zzj3r/r; mkdir -p $r $out
save() { (cd /tmp/zzj3r && tar czf $out/zzj3.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc3
t0=$(date +%s)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread
for prob in causal_s257_b32 causal_s129_b64 llama_short_gqa; do
  ./flexjit bench --suite users.json --only $prob > /dev/null 2>&1  # compile into the cache
  timeout 120 ncu --clock-control none --metrics $M --launch-skip 60 --launch-count 16 --csv \
    ./flexjit bench --suite users.json --only $prob > $r/fj_$prob.csv 2> $r/fj_$prob.err
  echo "fj $prob rc=$? $(( $(date +%s) - t0 )) s"
  timeout 120 ncu --clock-control none --metrics $M --launch-skip 40 --launch-count 16 --csv \
    python3 cudnn_kernels.py $prob 12 > $r/cu_$prob.csv 2> $r/cu_$prob.err
  echo "cu $prob rc=$? $(( $(date +%s) - t0 )) s"; save
done
python3 - $r <<'PY' | tee $r/summary.txt
import csv, sys, glob, io
r = sys.argv[1]
for f in sorted(glob.glob(f"{r}/*.csv")):
    text = open(f).read()
    i = text.find('"ID"')
    if i < 0: print(f, "no data"); continue
    rows = list(csv.DictReader(io.StringIO(text[i:])))
    print("==", f.split("/")[-1])
    seen = {}
    for row in rows:
        key = (row["ID"], row["Kernel Name"][:60])
        seen.setdefault(key, {})[row["Metric Name"]] = row["Metric Value"]
    for (i, k), m in seen.items():
        print(f"  {i:>3} {k:60s} {m.get('gpu__time_duration.sum',''):>10s} ns  rd {m.get('dram__bytes_read.sum','')} wr {m.get('dram__bytes_write.sum','')} tensor {m.get('sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active','')} grid {m.get('launch__grid_size','')} regs {m.get('launch__registers_per_thread','')}")
PY
save
