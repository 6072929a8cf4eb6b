#!/usr/bin/env bash
# Issue 20's reliability fixes on the GPU machine, after a build (bash .deps/on-device.sh --
# bash tools/gpu-reliab.sh BUILD_DIR; SKIP_TESTS=1 for this script alone). Proves that the
# build found RE2 in .deps (the kernel-name filter), and runs the fixed cases on the
# toolkit's own largest library with 16 CPUs: the filter over every kernel, a copy of the
# library truncated while it is read (exit 2 with one line, never SIGBUS), the
# decompression budget (peak RSS at --jobs 16), and devices on the real driver.
set -uo pipefail
build=${1:-/tmp/gpu-build}
ct=$build/apps/cudatool/cudatool
lib=${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so.13
rc=0
nvidia-smi -L
ldd "$ct" | grep -E 're2|zstd|lz4' || { echo "FAIL: the binary links no RE2"; rc=1; }
"$build/tests/cudatool_unit_tests" --gtest_filter='KernelFilter.*:MappedFileTest.*:ChangingFile.*:KernelScan.Decompressed*' || rc=1
"$build/tests/cudatool_cli_tests" --gtest_filter='CliKernels.TheNameFilter*:CliKernels.AFileTruncated*:CliKernels.OutOfMemory*:CliFakeDriver.Unterminated*:CliDriverVersion.*:OutputErrors.*' || rc=1
# The filter over every kernel of the library, timed (std::regex took 0.45 s serially).
/usr/bin/time -f "kernels --kernel '.*': %e s wall, %M KB peak RSS" "$ct" kernels --kernel '.*' --json "$lib" >/dev/null || rc=1
# Truncated while read: exit 2 and one line, or 0 where the scan was done first.
copy=$(mktemp /tmp/cudatool-big-XXXXXX.so)
for delay in 0.05 0.1 0.2 0.4; do
  cp "$lib" "$copy"
  "$ct" kernels "$copy" >/dev/null 2>"$copy.err" &
  pid=$!
  sleep "$delay"
  truncate -s 100M "$copy"
  wait "$pid"
  status=$?
  echo "truncated after ${delay}s: exit $status: $(head -c 300 "$copy.err")"
  case $status in 0|2) ;; *) echo "FAIL: exit $status"; rc=1 ;; esac
done
rm -f "$copy" "$copy.err"
# The devices listing on the real driver (names and bus ids bounded by their buffers).
"$ct" devices || rc=1
echo "gpu-reliab: $([ $rc -eq 0 ] && echo ok || echo FAILED)"
exit $rc
