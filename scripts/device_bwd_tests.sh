# The fast backward's GPU test groups and its sanitizers, as the device scripts under notes/results/*/
# run them (sourced after device_lib.sh's device_start, from the folder that holds ./gta, the
# stripped build/tests/gpu_test_attention). TEMPLATE_DIR "" runs the binary's own templates.
#   device_bwd_tests TEMPLATE_DIR LIMIT_S; wait; device_failures
#   device_bwd_race_sync TEMPLATE_DIR LIMIT_S; wait   (after device_bwd_tests on the same machine)

# Five test groups and memcheck of one fast backward per head dim, in the background: every test
# compares dQ, dK and dV with the float64 reference on fresh seeds and poisoned outputs.
device_bwd_tests() {
  local limit=$2
  export FLEXJIT_TEMPLATE_DIR=$1
  device_tests suite ./gta 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FullyMaskedRowsGiveZeroGradients' "$limit"
  device_tests dims ./gta 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim:BwdGpu.HalfSlabSlicesAtHeadDimsAbove128' "$limit"
  device_tests ws1 ./gta 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeConvertsDqAsEachKvHeadLands:BwdGpu.FastModeOverLengthsTheTilesDivide' "$limit"
  device_tests ws2 ./gta 'BwdGpu.WarpSpecializedFastDkdvManyKvTiles:BwdGpu.ScoreDiagonalValues:BwdGpu.ScoreDiagonalValuesOutOfBounds' "$limit"
  FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta 'RandomProblemsGpu.*' "$limit"
  device_sanitize memcheck ./gta 'BwdGpu.FastModeOnePerHeadDim' "$limit"
  unset FLEXJIT_TEMPLATE_DIR
}
# racecheck and synccheck of one fast backward per head dim, on the kernels device_bwd_tests' `dims`
# group compiled (same template folder).
device_bwd_race_sync() {
  local limit=$2 tool
  export FLEXJIT_TEMPLATE_DIR=$1
  for tool in racecheck synccheck; do
    DEVICE_SANITIZE_CACHE=/tmp/fj_dims device_sanitize $tool ./gta 'BwdGpu.FastModeOnePerHeadDim' "$limit"
  done
  unset FLEXJIT_TEMPLATE_DIR
}
