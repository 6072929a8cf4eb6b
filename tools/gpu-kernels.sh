#!/usr/bin/env bash
# `cudatool kernels` on a GPU machine, after a build (bash .deps/on-device.sh -- bash
# tools/gpu-kernels.sh BUILD_DIR, or SKIP_TESTS=1 for this script alone): the GPU
# comparison of every sm_90 kernel of libcusparse.so.12 with the driver (test
# KernelsGpu.*; prints "kernels GPU comparison: ... N differences"), then the offline
# command's own figures on the toolkit's largest library.
set -uo pipefail
build=${1:-/tmp/gpu-build}
ct=$build/apps/cudatool/cudatool
lib=${CUDA_HOME:-/usr/local/cuda}/lib64
nvidia-smi -L
"$build/tests/cudatool_unit_tests" --gtest_filter='KernelsGpu.*'
rc=$?
for f in libcublasLt.so.13 libcusparse.so.12; do
  [ -f "$lib/$f" ] || continue
  /usr/bin/time -f "$f: %e s wall, %U s user, %S s sys, %M KB peak RSS" "$ct" kernels --json "$lib/$f" >/dev/null
  /usr/bin/time -f "$f --arch sm_90: %e s wall, %U s user, %S s sys, %M KB peak RSS" "$ct" kernels --json --arch sm_90 "$lib/$f" >/dev/null
done
"$ct" kernels "$lib/libcusparse.so.12" --arch sm_90 --threads 256 --sort regs | head -8
exit $rc
