#!/usr/bin/env bash
# The engines of `check` and `bench-pool` on a GPU after their split (issue 21: one
# Stream/Event/buffer/context-guard set), after `bash .deps/on-device.sh` built into
# /tmp/gpu-build:  SKIP_TESTS=1 bash .deps/on-device.sh -- bash tools/gpu-engines.sh
# BASELINE=path/to/the/previous/cudatool adds a side-by-side run of the build before.
# Shows:
#   - the GPU tests of both engines (CliCheckGpu, CliBenchPoolGpu, MemoryPoolGpu);
#   - every check, every bench-pool backend and allocator (stream included: the one Stream);
#   - compute-sanitizer memcheck with --leak-check full on both (every stream, event and
#     buffer is freed, in its context), where the toolkit has it;
#   - whole-process timings of check and the pool goals (bench/check.sh, bench/pool.sh),
#     against BASELINE when given.
set -uo pipefail
build=${BUILD:-/tmp/gpu-build}
ct=${CUDATOOL:-$build/apps/cudatool/cudatool}
baseline=${BASELINE:-}
out=${OUT:-/tmp/gpu-out}
mkdir -p "$out"
TIMEFORMAT='[%R s]'
section() { printf '\n===== %s =====\n' "$*"; }
run() {
  echo "\$ $*"
  time {
    "$@"
    echo "[exit $?]"
  }
}

section "GPU tests of the engines"
"$build/tests/cudatool_cli_tests" --gtest_filter='CliCheckGpu*:CliBenchPoolGpu*' 2>&1 | tail -15
"$build/tests/cudatool_unit_tests" --gtest_filter='MemoryPoolGpu*' 2>&1 | tail -10

section "check"
run "$ct" check
run "$ct" check --json --only compute,memory,hostlink
run env CUDATOOL_CHECK_INJECT_FAULT=compute "$ct" check --only compute
run "$ct" check --only hostlink --min-h2d-gbps 10000

section "bench-pool, every backend and allocator"
run "$ct" bench-pool --backend device --iterations 20000 --no-progress
run "$ct" bench-pool --backend device --allocators stream --threads 4 --iterations 20000 --json
run "$ct" bench-pool --backend pinned --iterations 5000 --no-progress
run "$ct" bench-pool --backend pinned --pinned-flags portable,devicemap --iterations 5000 --json

sanitizer=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
if [[ -x $sanitizer ]]; then
  section "compute-sanitizer memcheck, leaks included"
  run "$sanitizer" --tool memcheck --leak-check full --error-exitcode 1 "$ct" check --skip peer
  run "$sanitizer" --tool memcheck --leak-check full --error-exitcode 1 \
    "$ct" bench-pool --backend device --iterations 2000 --no-progress
else
  echo "no compute-sanitizer at $sanitizer: leaks not checked"
fi

section "timings: check"
bash bench/check.sh "$ct" 10
if [[ -n $baseline ]]; then
  echo "--- the build before ($baseline)"
  bash bench/check.sh "$baseline" 10
fi
section "timings: the pool goals"
bash bench/pool.sh "$ct" 1 0 2>/dev/null
if [[ -n $baseline ]]; then
  echo "--- the build before ($baseline)"
  bash bench/pool.sh "$baseline" 1 0 2>/dev/null
fi
