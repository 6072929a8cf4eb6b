#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/*.cpp) with clang-14, ASan and UBSan, and runs each
# for a while, starting from its corpus (fuzz/corpus/<name>/; new inputs go to a scratch
# directory, the repository's corpus is only read). Any crash, leak or sanitizer report
# fails the script, leaving the input in BUILD_DIR/artifacts/.
#
# Usage: bash tools/fuzz.sh [SECONDS_PER_HARNESS] [BUILD_DIR]     (default 30, build-fuzz)
#   FUZZ_RUNS=N   run N executions per harness instead of a time (the long run: 10000000)
#   FUZZ_ONLY=cubin,units   only these harnesses
# Prints one summary line per harness: executions, seconds, crashes.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build=${2:-build-fuzz}
export PATH=${CUDA_HOME:-/usr/local/cuda}/bin:$PATH
for tool in clang-14 clang++-14; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: $tool not found (tools/install-deps.sh installs it)" >&2; exit 1; }
done
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUDATOOL_FUZZ=ON -DCUDATOOL_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzzers
mkdir -p "$build/artifacts" "$build/scratch"
harnesses=()
for source in fuzz/*.cpp; do
  name=$(basename "$source" .cpp)
  [ "$name" = replay_main ] && continue
  if [ -n "${FUZZ_ONLY:-}" ] && [[ ",$FUZZ_ONLY," != *",$name,"* ]]; then continue; fi
  harnesses+=("$name")
done
if [ -n "${FUZZ_RUNS:-}" ]; then limit=(-runs="$FUZZ_RUNS"); else limit=(-max_total_time="$seconds"); fi
status=0
summary=()
for name in "${harnesses[@]}"; do
  scratch="$build/scratch/$name"
  mkdir -p "$scratch"
  log="$build/artifacts/$name.log"
  start=$(date +%s)
  # -rss_limit_mb: a harness that grows memory without bound fails; -timeout: one input
  # taking longer than 10 s is a hang.
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$build/fuzz/fuzz_$name" "${limit[@]}" -rss_limit_mb=2048 -timeout=10 \
       -artifact_prefix="$build/artifacts/$name-" -print_final_stats=1 \
       "$scratch" "fuzz/corpus/$name" >"$log" 2>&1; then
    crashes=0
  else
    crashes=1
    status=1
    tail -40 "$log" >&2
  fi
  elapsed=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  summary+=("$(printf '%-14s %12s execs %6s s  crashes %s' "$name" "${execs:-?}" "$elapsed" "$crashes")")
done
printf '%s\n' "${summary[@]}"
exit $status
