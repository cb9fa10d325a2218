#!/bin/bash
# zzj4: zzj3's ncu put cuDNN's S=257 causal forward at 66 us, level with flexjit's 65, while the
# benchmarks time them 45 and 71 us. The same kernels under ncu with locked clocks and with the
# L2 left warm, and the benchmarks again in the same call.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zzj4}; r=/tmp/zzj4r/r; mkdir -p $r $out
save() { (cd /tmp/zzj4r && tar czf $out/zzj4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1 FLEXJIT_AUTOTUNE=off FLEXJIT_CACHE_DIR=/tmp/fc4
t0=$(date +%s)
python3 - > users1.json <<'PY'
import json
d = json.load(open("users.json")); d["problems"] = [p for p in d["problems"] if p["name"] == "causal_s257_b32"]
print(json.dumps(d))
PY
./flexjit bench --suite users1.json --json $r/bench_fj.jsonl > $r/bench_fj.log 2>&1
timeout 100 python3 offsuite_peers.py --suite users1.json --no-flex > $r/bench_sdpa.jsonl 2> $r/sdpa.err
grep -o '"name":"[a-z0-9_]*"\|"system":"[a-z0-9]*"\|"fwd_ms":[0-9.]*\|"bwd_ms":[0-9.]*' $r/bench_fj.jsonl $r/bench_sdpa.jsonl | tr '\n' ' '; echo
M=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum
for cc in "--clock-control base --cache-control all" "--clock-control none --cache-control none"; do
  tag=$(echo $cc | tr -d ' -' | cut -c1-40)
  timeout 100 ncu $cc --metrics $M --launch-skip 60 --launch-count 6 --csv ./flexjit bench --suite users1.json > $r/fj_$tag.csv 2>&1
  timeout 100 ncu $cc --metrics $M --launch-skip 40 --launch-count 8 --csv python3 cudnn_kernels.py causal_s257_b32 12 > $r/cu_$tag.csv 2>&1
  echo "$tag $(( $(date +%s) - t0 )) s"
  for f in $r/fj_$tag.csv $r/cu_$tag.csv; do grep -E 'fprop|flexjit_attention_fwd|bprop|dkdv' $f | grep -E 'gpu__time_duration|per_second' | awk -F'","' '{print $5, $(NF-2), $NF}' | cut -c1-150 | head -8; done
  save
done
