#!/usr/bin/env bash
# Everything that needs the GPU, in one call (device time is scarce): run from the repo
# root on the GPU machine after `bash .deps/on-device.sh` has built into /tmp/gpu-build
# and run ctest. Usage: bash .deps/on-device.sh -- bash tools/gpu-all.sh
set -uo pipefail
build=/tmp/gpu-build
ct=$build/apps/cudatool/cudatool
out=${OUT:-/tmp/gpu-out}
section() { printf '\n===== %s =====\n' "$*"; }
section "GPU tests, verbose (occupancy, compile, pools)"
for filter in 'OccupancyGpu*' 'CompileGpu*' 'MemoryPoolGpu*' 'DeviceGpu*'; do
  "$build/tests/cudatool_unit_tests" --gtest_filter="$filter" 2>&1 | grep -vE '^\[ +(RUN|OK) ' | tail -25
done
section "cubin vs ptxas report for sm_90 (alone, verbose)"
"$build/tests/cudatool_unit_tests" --gtest_filter='Architectures/CubinAgainstPtxas.*' 2>&1 | tail -15
section "foundation"
bash tools/gpu-foundation.sh "$build" 2>&1
section "compile --load over the corpus"
for f in tests/data/compile/*.cu; do
  extra=""; [ "${f##*/}" = maxrreg_spill.cu ] && extra="--maxrregcount 32"
  echo "\$ cudatool compile $f --no-extern-c --load $extra"
  "$ct" compile "$f" --no-extern-c --load --no-cache $extra 2>&1 | tail -2; echo "[exit ${PIPESTATUS[0]}]"
done
"$ct" compile tests/data/compile/register_heavy.cu --no-extern-c --threads 256 --no-cache
section "occupancy on the live device vs --arch sm_90"
"$ct" occupancy --threads 256 --regs 64 --smem 48K
"$ct" occupancy --threads 256 --regs 64 --smem 48K --arch sm_90
"$ct" occupancy --threads 128 --regs 32 --sweep | tail -12
section "memory pools"
bash bench/pool.sh "$ct" 1 0 2>/dev/null
section "compute-sanitizer memcheck on the device pool tests"
command -v compute-sanitizer >/dev/null &&
  compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    "$build/tests/cudatool_unit_tests" --gtest_filter='MemoryPoolGpu.*:-MemoryPoolGpu.OutOfMemory*' 2>&1 | tail -8
echo "[memcheck exit ${PIPESTATUS[0]}]"
command -v compute-sanitizer >/dev/null &&
  compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    "$ct" bench-pool --backend device --iterations 2000 --warmup 100 --no-progress 2>&1 | tail -6
echo "[memcheck bench-pool exit ${PIPESTATUS[0]}]"
