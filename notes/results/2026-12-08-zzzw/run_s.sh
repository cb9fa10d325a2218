#!/usr/bin/env bash
# (zzzw) one call when too little device time is left for the FA4 pair (run_c.sh + run_b.sh):
# the landing binary's GPU tests and memcheck beside the suite's kernels compiled for both arms,
# then on a quiet GPU alternating rounds of old (main's templates, FLEXJIT_TEMPLATE_DIR) and new
# (the binary's own) over the suite, with peers.py (cuDNN, FA2, FlexAttention; no --flash) after
# two rounds of each (a call cut short keeps what it saved; END sets the last round's end). Carry .gpu/zzzwc; about 560 s.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzw}; r=/tmp/zzzwsr/t; mkdir -p $out $r
save() { (cd /tmp/zzzwsr && tar czf $out/s_all.tar.gz t); }
device_start $r
device_unpack .
device_tests suite ./gta 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FullyMaskedRowsGiveZeroGradients' 200
device_tests dims ./gta 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128' 200
device_tests ws1 ./gta 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeConvertsDqAsEachKvHeadLands:BwdGpu.FastModeOverLengthsTheTilesDivide' 200
device_tests ws2 ./gta 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.ScoreDiagonalValues:BwdGpu.ScoreDiagonalValuesOutOfBounds' 200
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta 'RandomProblemsGpu.*' 200
cp -r tmain /tmp/
for a in old new; do
  tv=""; [ $a = old ] && tv=/tmp/tmain/templates
  (FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 200 ./flexjit bench --suite suite_official.json > $r/warm_$a.txt 2>&1
   echo "warm $a rc=$? $(( $(date +%s) - device_t0 )) s") &
done
device_sanitize memcheck ./gta 'BwdGpu.FastModeOnePerHeadDim' 200
wait
device_failures
save
bench() {
  local tv=""; [ $1 = old ] && tv=/tmp/tmain/templates
  FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fc_$1 timeout $3 ./flexjit bench --suite suite_official.json --json $r/$2.jsonl > $r/$2.log 2>&1 || tail -3 $r/$2.log
  echo "$2 $(( $(date +%s) - device_t0 )) s"; save
}
end=${END:-555}  # seconds after the start by which the last round ends
for n in 1 2; do
  for a in old new; do
    left=$(( end - 60 - ($(date +%s) - device_t0) )); [ $left -gt 40 ] && bench $a $a$n $(( left < 90 ? left : 90 ))
  done
done
left=$(( end - 100 - ($(date +%s) - device_t0) ))
if [ $left -gt 60 ]; then
  PYTHONUNBUFFERED=1 timeout $left python3 peers.py --suite suite_official.json > $r/peers.jsonl 2> $r/peers.err || tail -3 $r/peers.err
  echo "peers $(( $(date +%s) - device_t0 )) s $(grep -c '"name"' $r/peers.jsonl) rows"; save
fi
for a in old new; do
  left=$(( end - ($(date +%s) - device_t0) )); [ $left -gt 40 ] && bench $a ${a}3 $left
done
python3 suite_table.py $r | tee $r/table.txt
echo "all $(( $(date +%s) - device_t0 )) s"
save
