#!/usr/bin/env bash
# (zq) call 4, after a call that copied .fa4a to /tmp/fa4a: (1) is the suite's first problem timed
# on a cold GPU? noop_d128 forward three times in a row right after the idle start, clocks logged;
# (2) FLASH's prefix-LM gradients against float32 (flash_check.py); (3) forward configs at d64 and
# d128 (two rounds), main's binary, FLEXJIT_AUTOTUNE=off.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zq4}; r=/tmp/zq4r/r; mkdir -p $r $out
save() { (cd /tmp/zq4r && tar czf $out/zq4.tar.gz r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
t0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader | tee $r/gpu.txt
for i in 1 2 3; do
  FLEXJIT_CACHE_DIR=/tmp/fc_w timeout 60 ./flexjit bench --no-bwd --suite suite.json --only noop_d128 --json $r/cold_$i.jsonl > $r/cold_$i.log 2>&1
  echo "cold run $i: $(grep -o '"fwd_tflops":[0-9.]*' $r/cold_$i.jsonl) $(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader)"
done
(cd ../.. && timeout 150 bash .fa4b/install.sh) > $r/install.txt 2>&1; echo "install rc=$? $(tail -1 $r/install.txt) $(( $(date +%s) - t0 )) s"
PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages timeout 200 python3 flash_check.py > $r/flash_check.jsonl 2> $r/flash_check.err || tail -3 $r/flash_check.err
cat $r/flash_check.jsonl; echo "flash check $(( $(date +%s) - t0 )) s"
save
cfg() {  # problem config round
  FLEXJIT_CACHE_DIR=/tmp/fc_$2 timeout 40 ./flexjit bench --no-bwd --suite suite.json --only $1 --config $2 --json $r/c_$1_$2_r$3.jsonl > $r/c_$1_$2_r$3.log 2>&1 || echo "$1 $2: $(tail -1 $r/c_$1_$2_r$3.log)"
}
for round in 1 2; do
  for c in m128n128w8s2g m128n128w8s2ws m128n128w8s3ws m192n128w12s2ws m192n128w12s3ws m128n176w8s2ws m128n64w8s2ws m128n64w8s3ws; do cfg noop_d64 $c $round; done
  for c in m128n128w8s2ws m128n128w8s3ws m128n128w8s2g m128n64w8s2ws m64n128w4s2ws; do cfg causal_d64 $c $round; done
  for c in m128n128w8s2ws m128n128w8s3ws m192n128w12s2ws m128n176w8s2ws; do cfg noop_d128 $c $round; done
  echo "round $round $(( $(date +%s) - t0 )) s"
done
save
python3 - $r <<'PY' | tee $r/configs.txt
import json, glob, re, sys, collections
d = collections.defaultdict(list)
for f in sorted(glob.glob(sys.argv[1] + "/c_*.jsonl")):
    m = re.search(r"c_(.+)_(m\d+n\d+w\d+s\d\w+)_r(\d)\.jsonl", f)
    for line in open(f):
        if line.startswith("{") and "fwd_tflops" in line:
            d[(m.group(1), m.group(2))].append(json.loads(line)["fwd_tflops"])
for (p, c), v in sorted(d.items()):
    print(f"{p:12s} {c:18s} {' / '.join(f'{x:.1f}' for x in v)}")
PY
echo "$(( $(date +%s) - t0 )) s"
save
