#!/usr/bin/env bash
# Session (r) r7: where a short walk's forward spends its time (the landing build, afc6d8f):
# ncu SpeedOfLight, ComputeWorkloadAnalysis, WarpStateStats and SourceCounters of the ws
# forward on sliding window d128 (about 9 key tiles per work tile), causal d128 and causal d64;
# the source page's stall samples per SASS instruction, summed by region.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/r7}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc
repo=$(cd ../.. && pwd); [ "$repo" = /work/main ] || { mkdir -p /work && ln -sfn "$repo" /work/main; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for ps in suite.json:sliding_window_d128 suite.json:causal_d128 suite64x.json:causal_d64; do
  s=${ps%%:*}; p=${ps##*:}
  timeout 150 ncu --kernel-name regex:flexjit_attention_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --import-source no -o $r/rep_$p ./flexjit bench --suite $s --only $p --no-bwd > $r/ncu_$p.log 2>&1; echo "$p rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$p.ncu-rep --print-details all > $r/details_$p.txt 2>&1
  ncu -i $r/rep_$p.ncu-rep --page source --csv --print-source sass > $r/src_$p.csv 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|Tensor|Stall|Warp Cycles Per Issued|Active Warps" $r/details_$p.txt | head -30
  python3 - $r/src_$p.csv <<'PY'
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr = None
for i, row in enumerate(rows):
    if any("Source" == c or c.startswith("Source") for c in row) and any("Sampl" in c for c in row):
        hdr = i; break
if hdr is None:
    print("no source table:", rows[:3]); sys.exit()
h = rows[hdr]; data = rows[hdr + 1:]
src = [j for j, c in enumerate(h) if c.startswith("Source")][0]
samp = [j for j, c in enumerate(h) if "Warp Stall Sampling (All" in c]
samp = samp[0] if samp else [j for j, c in enumerate(h) if "Sampl" in c][0]
def num(x):
    try: return float(x.replace(",", ""))
    except: return 0.0
tot = sum(num(r[samp]) for r in data if len(r) > samp)
print("samples", tot, "columns:", [c for c in h if "stall" in c.lower()][:30])
top = sorted((r for r in data if len(r) > samp), key=lambda r: -num(r[samp]))[:40]
for r in top:
    print(f"{num(r[samp]) / max(tot, 1) * 100:5.1f}%  {r[src][:110]}")
ops = collections.Counter()
for r in data:
    if len(r) > samp:
        op = r[src].split()[0] if r[src].split() else "?"
        if op.startswith("@"): op = r[src].split()[1] if len(r[src].split()) > 1 else op
        ops[op.split(".")[0]] += num(r[samp])
print("by opcode:", ", ".join(f"{k} {v / max(tot, 1) * 100:.1f}%" for k, v in ops.most_common(16)))
PY
done
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
