#!/usr/bin/env bash
# Builds cudatool and runs the whole test suite through ctest, builds the Release
# configuration with warnings as errors, then runs the same suite in an
# AddressSanitizer/UndefinedBehaviorSanitizer build (the Python module's tests among it).
# GPU tests skip, with their reason, where no GPU or driver is found. The Python module is
# built and tested in the first build (its pytest suite runs under ctest), and the wheel
# `pip install .` makes is built and installed into a fresh venv (tools/test-wheel.sh).
# Usage: bash tools/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=${CUDA_HOME:-/usr/local/cuda}/bin:$PATH
jobs=$(nproc)
# The venv with the module's build requirements and pytest (tools/python-env.sh).
python=$(bash tools/python-env.sh)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDATOOL_WERROR=ON \
  -DCUDATOOL_BUILD_PYTHON=ON -DPython_EXECUTABLE="$python" >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
bash tools/test-wheel.sh "$python" build
# The Release build (what is packaged: -O3, hardening, no test hooks) must be warning-free
# too: the tool and the library only, with warnings as errors, and a smoke run.
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDATOOL_WERROR=ON \
  -DCUDATOOL_BUILD_TESTS=OFF -DCUDATOOL_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-release -j"$jobs"
build-release/apps/cudatool/cudatool occupancy --arch sm_90 --threads 256 --format csv,noheader
# Its packages: dependencies, contents, copyright, man page, multiarch, hardening.
bash tests/install/package_deb.sh build-release | tail -3
if [ "${1:-}" != "--no-sanitize" ]; then
  # The Python module too: its pytest suite runs instrumented (tests/python/CMakeLists.txt
  # preloads ASan's runtime into the interpreter).
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCUDATOOL_SANITIZE=ON \
    -DCUDATOOL_BUILD_BENCHMARKS=OFF -DCUDATOOL_WERROR=ON \
    -DCUDATOOL_BUILD_PYTHON=ON -DPython_EXECUTABLE="$python" >/dev/null
  cmake --build build-asan -j"$jobs"
  # allocator_may_return_null: tests check that an impossible malloc becomes a MemoryError.
  # LSAN_OPTIONS=use_tls=0: LeakSanitizer's exit-time tracer crashed ("Tracer caught signal
  # 11 ... LeakSanitizer has encountered a fatal error") while reading the main thread's
  # thread-local storage in `cudatool compile` runs that had loaded NVRTC, depending on the
  # process's environment (a longer PATH was enough), so some compile tests failed every
  # time in CI (2026-11-23, gcc 12's LSan, glibc 2.36). Without scanning TLS the tracer
  # does not read it: LSan gets stricter (what only TLS points to counts as leaked), not
  # blinder; tests/lsan.supp names the one such block of glibc's.
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS=use_tls=0:print_suppressions=0:suppressions=$PWD/tests/lsan.supp \
    ctest --test-dir build-asan --output-on-failure -j"$jobs"
fi
