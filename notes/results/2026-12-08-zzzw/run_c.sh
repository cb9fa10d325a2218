#!/usr/bin/env bash
# (zzzw) call C: the GPU tests of the landing binary (uniform-noop: main's C++, its templates
# embedded) and memcheck of the fast backward; beside them, the suite's kernels of call B's two
# arms compiled into the kernel caches call B reads (/tmp persists on the warm machine).
# Carry .gpu/zzzwc; about 330 s.
set -u
cd "$(dirname "$0")"
source ./device_lib.sh
out=${OUT:-/tmp/zzzw}; r=/tmp/zzzwcr/t; mkdir -p $out $r
device_start $r
device_unpack .
device_tests suite ./gta 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FullyMaskedRowsGiveZeroGradients' 240
device_tests dims ./gta 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128' 240
device_tests ws1 ./gta 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeConvertsDqAsEachKvHeadLands:BwdGpu.FastModeOverLengthsTheTilesDivide' 240
device_tests ws2 ./gta 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.ScoreDiagonalValues:BwdGpu.ScoreDiagonalValuesOutOfBounds' 240
FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta 'RandomProblemsGpu.*' 240
cp -r tmain /tmp/
for a in old new; do
  tv=""; [ $a = old ] && tv=/tmp/tmain/templates
  (FLEXJIT_TEMPLATE_DIR=$tv FLEXJIT_CACHE_DIR=/tmp/fc_$a timeout 240 ./flexjit bench --suite suite_official.json > $r/warm_$a.txt 2>&1
   echo "warm $a rc=$? $(( $(date +%s) - device_t0 )) s") &
done
device_sanitize memcheck ./gta 'BwdGpu.FastModeOnePerHeadDim' 240
wait
device_failures
(cd /tmp/zzzwcr && tar czf $out/c_tests.tar.gz t)
echo "all $(( $(date +%s) - device_t0 )) s"
