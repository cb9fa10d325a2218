#!/usr/bin/env bash
# Shared steps of the device scripts under notes/results/*/ (sourced, from the repository root as
# the device tool runs them): unpack the carried xz binaries, record the GPU, and run gtest filters
# and compute-sanitizer tools in the background, each with a time limit and a one-line summary.
#   source scripts/device_lib.sh; device_start RESULTS_DIR; device_unpack .gpu/<tag>
#   device_tests TAG BINARY FILTER LIMIT_S; device_sanitize TOOL BINARY FILTER LIMIT_S; wait
#   (DEVICE_SANITIZE_CACHE=/tmp/fj_TAG: a sanitizer reuses the kernels a test group compiled)
#   device_failures   (the failed tests and their messages)

# RESULTS_DIR: where logs go; sets the clock the summaries count from.
device_start() {
  device_results=$1
  mkdir -p "$device_results"
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} FLEXJIT_AUTOTUNE=off
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$device_results/gpu.txt"
  device_t0=$(date +%s)
}
# Every NAME.xz in DIR to NAME (a carried folder replaces the device's copy each call, so every call
# unpacks again).
device_unpack() {
  local f
  for f in "$1"/*.xz; do
    [ -f "${f%.xz}" ] || python3 -c "import lzma,sys; open(sys.argv[1][:-3],'wb').write(lzma.open(sys.argv[1]).read())" "$f"
    chmod +x "${f%.xz}"
  done
}
device_tests() {
  local tag=$1 bin=$2 filter=$3 limit=$4
  (FLEXJIT_CACHE_DIR=/tmp/fj_$tag timeout "$limit" "$bin" --gtest_filter="$filter" > "$device_results/tests_$tag.txt" 2>&1
   echo "$tag rc=$? $(( $(date +%s) - device_t0 )) s $(grep -c '^\[       OK' "$device_results/tests_$tag.txt") ok") &
}
device_sanitize() {
  local tool=$1 bin=$2 filter=$3 limit=$4
  (FLEXJIT_CACHE_DIR=${DEVICE_SANITIZE_CACHE:-/tmp/fjs_$tool} timeout "$limit" compute-sanitizer --tool "$tool" "$bin" --gtest_filter="$filter" \
     > "$device_results/$tool.txt" 2>&1
   echo "$tool rc=$? $(grep -h 'ERROR SUMMARY' "$device_results/$tool.txt" | tail -1)") &
}
device_failures() {
  grep -hE "^\[ +(OK|FAILED) |Failure|FAILED TEST|of seed" "$device_results"/tests_*.txt | grep -v "^\[       OK" | head -40
}
