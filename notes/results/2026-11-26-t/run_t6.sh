#!/usr/bin/env bash
# Session (t) t6: where the documents forward spends its time (main at 4cb658b), for the next
# session: ncu SpeedOfLight, ComputeWorkloadAnalysis, WarpStateStats and SourceCounters of the ws
# forward on document_causal_d128 with the default 128 x 128 tiles and with 128 x 64 (t4: 290 vs
# 304 TF/s), and the stall samples per SASS instruction (top 40).
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/t6}; mkdir -p $out/r; r=$out/r
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fct6
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
for c in m128n128w8s2ws m128n64w8s2ws; do
  p=document_causal_d128
  timeout 200 ncu --kernel-name regex:flexjit_attention_fwd --launch-skip 2 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SourceCounters --section LaunchStats --import-source no -o $r/rep_$c ./flexjit bench --suite suite.json --only $p --config $c --no-bwd > $r/ncu_$c.log 2>&1; echo "$c rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/rep_$c.ncu-rep --print-details all > $r/details_$c.txt 2>&1
  ncu -i $r/rep_$c.ncu-rep --page source --csv --print-source sass > $r/src_$c.csv 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|Tensor|Warp Cycles Per Issued|Registers Per|Spill" $r/details_$c.txt | head -20
  python3 - $r/src_$c.csv <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr = None
for i, row in enumerate(rows):
    if any(c.startswith("Source") for c in row) and any("Sampl" in c for c in row):
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
print("samples", tot)
top = sorted((r for r in data if len(r) > samp), key=lambda r: -num(r[samp]))[:40]
for r in top:
    print(f"{num(r[samp]) / max(tot, 1) * 100:5.1f}%  {r[src][:110]}")
PY
done > $r/summary.txt 2>&1
head -120 $r/summary.txt
rm -f $r/*.ncu-rep
echo "total $(( $(date +%s) - t0 )) s"
cd $out && tar czf r.tar.gz r && rm -rf r
