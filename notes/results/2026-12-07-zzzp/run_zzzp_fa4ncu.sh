#!/usr/bin/env bash
# (zzzp) call 4, after run_zzzp_1.sh installed FA4 on this warm machine (carry .gpu/zzzp). FA4's sm90 backward against flexjit's dK/dV kernel, per tile, on one machine: causal d128
# (the same 64 x 128 shape and shared-memory bytes: the gap there is instructions and waits) and
# noop d128 (FA4's 80-query tile). Carry .fa4b and this folder (flexjit: main's, stripped; fa4_bwd_once.py copied from ../2026-12-06-zzzn/),
# after a call that copied .fa4a to /tmp/fa4a.
# 1. one ncu pass over every kernel of two FA4 backward reps (names and durations only);
# 2. per problem, the FA4 backward kernel that ran longest, then flexjit's dK/dV kernel: SpeedOfLight,
#    WarpStateStats, LaunchStats, SourceCounters and three metrics; the SASS source view as CSV.
set -u
cd "$(dirname "$0")"
out=${OUT:-/tmp/zpncu}; r=/tmp/zpncur/r; mkdir -p $r $out
save() { (cd /tmp/zpncur && tar czf $out/fa4ncu.tar.gz --exclude="*.ncu-rep" r); }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $r/gpu.txt
t0=$(date +%s)
if [ -d /tmp/site/flash_attn ]; then echo "FA4 already installed (an earlier call on this machine)" > $r/install.txt; else
  ( cd ../.. && timeout 200 bash .fa4b/join_install.sh ) > $r/install.txt 2>&1; fi &
inst=$!
# bwd-pdl's sanitizers (gta: the branch's tests), while the install runs on the CPU
if [ -x ./gta ] && [ "${SAN:-0}" = 1 ]; then
  for tool in memcheck synccheck racecheck; do
    (FLEXJIT_CACHE_DIR=/tmp/fjs_$tool timeout 170 compute-sanitizer --tool $tool ./gta --gtest_filter='BwdGpu.FastModeOnePerHeadDim' > $r/$tool.txt 2>&1
     echo "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' $r/$tool.txt | tail -1)") &
  done
fi
wait
echo "install: $(tail -1 $r/install.txt) $(( $(date +%s) - t0 )) s"
save
export PYTHONPATH=/tmp/site:/tmp/site/nvidia_cutlass_dsl/dsl_packages
metrics=sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,sm__cycles_elapsed.max
sections="--section SpeedOfLight --section WarpStateStats --section LaunchStats --section SourceCounters"
for c in causal noop; do
  flag=""; [ $c = causal ] && flag=--causal
  timeout 150 ncu --metrics gpu__time_duration.sum --csv python3 fa4_bwd_once.py $flag --reps 2 > $r/fa4_list_$c.csv 2> $r/fa4_list_$c.err
  echo "list $c rc=$? $(( $(date +%s) - t0 )) s"
  # the longest kernel whose name is not the forward's
  name=$(python3 - $r/fa4_list_$c.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; rows = rows[1:]
ki, mi, vi = h.index("Kernel Name"), h.index("Metric Name"), h.index("Metric Value")
best = {}
for r in rows:
    if r[mi] == "gpu__time_duration.sum":
        v = float(r[vi].replace(",", ""))
        best[r[ki]] = max(best.get(r[ki], 0), v)
for k, v in sorted(best.items(), key=lambda kv: -kv[1])[:8]:
    print(f"{v:12.0f} {k[:160]}", file=sys.stderr)
cand = [k for k in best if "fwd" not in k.lower() and "forward" not in k.lower()]
print(max(cand, key=best.get) if cand else "")
PY
  2>> $r/fa4_names_$c.txt)
  cat $r/fa4_names_$c.txt
  [ -z "$name" ] && { echo "no FA4 kernel found for $c"; continue; }
  short=$(echo "$name" | cut -c1-60 | sed 's/[^A-Za-z0-9_]/./g')
  timeout 200 ncu --kernel-name regex:"^$short" --launch-skip 1 --launch-count 1 $sections --metrics $metrics \
    -o $r/fa4_$c python3 fa4_bwd_once.py $flag --reps 3 > $r/ncu_fa4_$c.log 2>&1
  echo "ncu fa4 $c rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/fa4_$c.ncu-rep --page source --csv --print-source sass > $r/src_fa4_$c.csv 2>&1
  ncu -i $r/fa4_$c.ncu-rep --page details > $r/details_fa4_$c.txt 2>&1
  save
done
for p in causal_d128 noop_d128; do
  FLEXJIT_CACHE_DIR=/tmp/fcn timeout 150 ncu --kernel-name flexjit_attention_bwd_dkdv --launch-skip 3 --launch-count 1 \
    $sections --metrics $metrics -o $r/fj_$p ./flexjit bench --suite suite.json --only $p > $r/ncu_fj_$p.log 2>&1
  echo "ncu fj $p rc=$? $(( $(date +%s) - t0 )) s"
  ncu -i $r/fj_$p.ncu-rep --page source --csv --print-source sass > $r/src_fj_$p.csv 2>&1
  ncu -i $r/fj_$p.ncu-rep --page details > $r/details_fj_$p.txt 2>&1
  save
done
for f in $r/details_*.txt; do echo "== $f"; grep -E "Duration|Grid Size|Block Size|Registers Per|gmma|inst_executed|wavefronts|cycles_elapsed|Warp Cycles Per Issued|Dynamic Shared" $f | head -14; done
rm -f $r/*.ncu-rep.tmp; du -sh $r
save
echo "all $(( $(date +%s) - t0 )) s"
