#!/usr/bin/env bash
# Session (zi), fifth call: racecheck on OrderedModeOnePerHeadDim (main 4de3b33's kernels), every
# hazard printed, counted by the pair of source sites.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zi5}; r=/tmp/zi5r/r; mkdir -p $r $out
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
FLEXJIT_CACHE_DIR=/tmp/fc_r5 timeout 400 compute-sanitizer --tool racecheck --print-limit 100000 ./gpu_test_attention --gtest_filter=BwdGpu.OrderedModeOnePerHeadDim > $r/san_racecheck.txt 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|OK \]|PASSED|FAILED' $r/san_racecheck.txt | tr '\n' ' ')"
python3 - $r/san_racecheck.txt <<'PY'
import re, sys, collections
pairs = collections.Counter(); cur = []
for line in open(sys.argv[1]):
    if "hazard detected" in line:
        if cur: pairs[tuple(cur)] += 1
        cur = [re.search(r"Potential (\w+) hazard", line).group(1)]
    m = re.search(r"(Write|Read) Thread .* at (.*?)\(", line)
    if m and cur is not None: cur.append(m.group(1) + " " + m.group(2).split("::")[-1].split("<")[0])
if cur: pairs[tuple(cur)] += 1
for k, v in pairs.most_common(): print(v, " | ".join(k))
PY
echo "$(( $(date +%s) - t0 )) s"
cd /tmp/zi5r && tar czf $out/zi5.tar.gz r
