#!/usr/bin/env bash
# (zzzr) call: ncu stall samples (SourceCounters, WarpStateStats) of the fast dK/dV kernel, GQA 4:1 causal against causal d128.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/z6}; r=$out; mkdir -p $out
device_start $r
device_unpack .
export FLEXJIT_CACHE_DIR=/tmp/fc6
for p in gqa_causal_d128 causal_d128; do
  timeout 110 ncu --kernel-name regex:bwd_dkdv --launch-skip 2 --launch-count 1 --section WarpStateStats --section SourceCounters --section InstructionStats --section ComputeWorkloadAnalysis --section SpeedOfLight -o $r/ncu6_$p ./flexjit bench --suite suite.json --only $p > $r/ncu6_$p.log 2>&1
  echo "$p rc=$?"
  ncu --import $r/ncu6_$p.ncu-rep --page details > $r/ncu6_$p.txt 2>&1
  ncu --import $r/ncu6_$p.ncu-rep --page raw --csv 2>/dev/null | python3 -c "
import csv,sys
rows=list(csv.reader(sys.stdin)); h=rows[0]; v=rows[-1]
d={a:b for a,b in zip(h,v)}
st={k:float(x.replace(',','')) for k,x in d.items() if 'pcsamp_warps_issue_stalled' in k and not k.endswith('not_issued') and x.replace(',','').replace('.','').isdigit()}
tot=sum(st.values()) or 1
for k,x in sorted(st.items(), key=lambda kv:-kv[1])[:12]: print(f'  {k.replace(\"smsp__pcsamp_warps_issue_stalled_\",\"\"):40s} {100*x/tot:5.1f} %')
"
  grep -E "Duration|Issued Ipc|Executed Instructions  " $r/ncu6_$p.txt | head -4
done
echo "all $(( $(date +%s) - device_t0 )) s"
