# (zzzx) The fast backward's GPU test groups and memcheck for one template folder, in the background
# (five processes, as (zzzw)'s calls ran them); sourced after device_lib.sh's device_start.
#   bwd_arm_tests TEMPLATE_DIR; wait; device_failures
bwd_arm_tests() {
  export FLEXJIT_TEMPLATE_DIR=$1
  device_tests suite ./gta 'BwdGpu.SuiteMods:BwdGpu.OddLengthsAndDifferentLengths:BwdGpu.Gqa8To1AndBshd:BwdGpu.NanInDoReachesOnlyTheGradientsThatReadIt:BwdGpu.FullyMaskedRowsGiveZeroGradients' 200
  device_tests dims ./gta 'BwdGpu.HeadDimsAndHalfPrecision:BwdGpu.FastModeOnePerHeadDim:BwdGpu.OrderedModeOnePerHeadDim' 200
  device_tests ws ./gta 'BwdGpu.WarpSpecializedFastDkdv:BwdGpu.FastModeOverLengthsTheTilesDivide:BwdGpu.ScoreDiagonalValues' 200
  FLEXJIT_RANDOM_PROBLEMS=6 device_tests random ./gta 'RandomProblemsGpu.*' 200
  device_sanitize memcheck ./gta 'BwdGpu.FastModeOnePerHeadDim' 200
  unset FLEXJIT_TEMPLATE_DIR
}
# racecheck and synccheck on the kernels the `dims` group compiled (same template folder).
bwd_arm_race_sync() {
  export FLEXJIT_TEMPLATE_DIR=$1
  local tool
  for tool in racecheck synccheck; do
    DEVICE_SANITIZE_CACHE=/tmp/fj_dims device_sanitize $tool ./gta 'BwdGpu.FastModeOnePerHeadDim' 240
  done
  unset FLEXJIT_TEMPLATE_DIR
}
