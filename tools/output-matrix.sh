#!/usr/bin/env bash
# Records cudatool's stdout, stderr and exit status over a matrix of invocations, so that a
# refactoring can be checked byte for byte against the build it started from:
#
#   tools/output-matrix.sh record BINARY KERNELS_DATA OUT_DIR   # once before, once after
#   tools/output-matrix.sh compare BEFORE_DIR AFTER_DIR         # cmp of every file
#
# KERNELS_DATA is the build's tests/kernels_data (nvcc-built fixtures). Everything runs
# without a driver (CUDATOOL_LIBCUDA points nowhere), so the output does not depend on the
# machine's GPU. compile runs with --no-cache; its one varying number (the compile time) is
# replaced by "T" before the files are written.
set -uo pipefail

record() {
  local bin=$1 data=$2 out=$3
  local src
  src=$(cd "$(dirname "$0")/.." && pwd)
  mkdir -p "$out"
  local n=0
  local cusparse=${CUDA_HOME:-/usr/local/cuda}/lib64/libcusparse.so
  run() {
    n=$((n + 1))
    local id
    id=$(printf '%03d' "$n")
    printf '%s\n' "$*" >"$out/$id.cmd"
    CUDATOOL_LIBCUDA=/nonexistent/libcuda.so.1 CUDATOOL_CACHE_DIR=/nonexistent-cache \
      "$bin" "$@" >"$out/$id.out" 2>"$out/$id.err"
    echo $? >"$out/$id.rc"
    if [[ ${1:-} == compile ]]; then
      sed -i -E 's/"compile_seconds": [0-9.e+-]+/"compile_seconds": T/; s/compiled in [0-9.]+ m?s/compiled in T/' \
        "$out/$id.out"
    fi
  }
  # Architecture names, every flag that takes one.
  local archs=(sm_90 sm_90a sm_100f compute_90 compute_100 9.0 10.0 12.1 SM_90 " sm_90" "sm_90 "
    sm_9 sm_1234 sm_70 sm_75 sm_80 sm_99 sm_ compute_ banana "" 9 9.10 sm_90x sm_090 sm_-90 1.0)
  for a in "${archs[@]}"; do
    run occupancy --arch "$a" --threads 256
    run kernels "$data/none.o" --arch "$a"
    run compile "$src/tests/data/compile/saxpy.cu" --no-cache --arch "$a"
    run devices --min-cc "$a"
    run check --min-cc "$a"
    run occupancy --kernel-from "$data/none.o" --kernel dynamic_shared --arch "$a" --threads 128
  done
  # Occupancy of kernels: the three commands, at a block size inside and outside the bounds.
  for t in 64 96 128 256 1024; do
    for fmt in "" --json; do
      for k in scale capped spill clustered dynamic_shared "step<1>"; do
        for a in sm_80 sm_90 sm_100; do
          run occupancy --kernel-from "$data/none.o" --kernel "$k" --arch "$a" --threads "$t" $fmt
        done
      done
      run kernels "$data/none.o" --threads "$t" $fmt
      run kernels "$data/libkernels.so" --threads "$t" --arch sm_90 $fmt
      for f in "$src"/tests/data/compile/*.cu; do
        run compile "$f" --no-cache --arch sm_90 --threads "$t" $fmt
      done
      run compile "$src/tests/data/compile/launch_bounds.cu" --no-cache --arch sm_120 --threads "$t" $fmt
      run compile "$src/tests/data/compile/launch_bounds.cu" --no-cache --arch sm_90,sm_100 --threads "$t" $fmt
    done
  done
  for f in none.o zstd.o lz4.o relocatable.o program libkernels.so libkernels.a rdc.o launcher.o \
    librdc.so rdc_program long_name.cubin; do
    run kernels "$data/$f"
    run kernels "$data/$f" --json
    run kernels "$data/$f" --relocatable --wide
  done
  run kernels "$data/none.o" --arch sm_90 --arch sm_100 --sort regs --json
  run kernels "$data/none.o" --arch sm_90,sm_100 --sort occupancy --threads 128
  run kernels "$data/none.o" --kernel 'scale<float' --threads 128
  run kernels "$data/none.o" --kernel '(' --threads 128
  run occupancy --kernel-from "$data/none.o" --kernel 'scale<float' --threads 128
  run occupancy --kernel-from "$data/none.o" --kernel 'nothing' --threads 128
  run occupancy --kernel-from "$data/none.o" --kernel '.' --threads 128
  run occupancy --kernel-from "$data/none.o" --kernel dynamic_shared --threads 128
  run occupancy --kernel-from "$data/none.o" --kernel dynamic_shared --sweep --arch sm_90
  run occupancy --arch sm_90 --sweep --regs 32 --json
  run occupancy --arch sm_90 --threads 256 --regs 64 --smem 48K --csv
  run occupancy --arch sm_90 --threads 256 --sweep-regs --json
  # kernels' formats and columns, occupancy's documents, completion and the command line
  # itself (issue 21's split of the app files).
  for fmt in csv csv,noheader; do
    run kernels "$data/none.o" --format "$fmt"
    run kernels "$data/none.o" --format "$fmt" --threads 256
    run kernels "$data/libkernels.so" --format "$fmt" --threads 64 --arch sm_90
  done
  for col in name regs shared local const threads barriers occupancy bogus; do
    run kernels "$data/none.o" --sort "$col" --threads 256
    run kernels "$data/none.o" --sort "$col" --threads 256 --json
  done
  run kernels "$data/none.o" --sort occupancy
  run kernels "$data/none.o" --json --format csv
  run kernels "$data/none.o" --kernel nothing_matches
  run kernels "$data/none.o" --kernel nothing_matches --json
  run kernels "$data/none.o" --arch sm_75
  run kernels "$data/none.o" --threads 0
  run kernels "$data/none.o" --jobs 0
  run kernels "$data/none.o" --jobs 1 --json --threads 128
  run kernels "$data/libkernels.a" --jobs 1 --json --kernel scale --threads 96
  run kernels "$src/README.md"
  run kernels "$src/README.md" --json
  run kernels /nonexistent
  for fmt in "" --json "--format csv" "--format csv,noheader"; do
    for a in sm_90 sm_88 sm_75 sm_120; do
      # shellcheck disable=SC2086
      {
        run occupancy --arch $a --threads 256 --regs 40 --smem 20K $fmt
        run occupancy --arch $a --threads 256 --regs 255 $fmt
        run occupancy --arch $a --threads 64 --barriers 3 --smem 100K $fmt
        run occupancy --arch $a --sweep $fmt
        run occupancy --arch $a --sweep --sms 7 --regs 64 $fmt
        run occupancy --arch $a --sweep 64,100,256 --smem 1K $fmt
        run occupancy --arch $a --threads 128 --sweep-regs --regs 33 $fmt
        run occupancy --arch $a --threads 128 --sweep-regs $fmt
        run occupancy --arch $a --threads 128 --sweep-smem --smem 10000 $fmt
        run occupancy --arch $a --threads 128 --sweep-smem $fmt
      }
    done
    # shellcheck disable=SC2086
    run occupancy --kernel-from "$data/none.o" --kernel 'scale<float' --arch sm_90 --threads 128 --smem 1K $fmt
  done
  for bad in "--sweep=" "--sweep 0,1" "--sweep 64," "--sweep 64,,128" "--threads x" \
    "--threads 64 --device 0" "--sweep-regs" "--sweep --sweep-regs" "--sweep --threads 64" \
    "--threads 64 --regs -1" "--threads 64 --smem 1Q" "--threads 64 --sms 0" ""; do
    # shellcheck disable=SC2086
    run occupancy --arch sm_90 $bad
  done
  run occupancy --threads 256
  run occupancy --threads 256 --json
  for fmt in "" --json; do
    # A kernel whose launch the architecture cannot hold (shared memory, block size).
    run occupancy --kernel-from "$data/none.o" --kernel 'scale<float' --arch sm_90 --threads 128 --smem 1G $fmt
    run occupancy --kernel-from "$data/none.o" --kernel 'scale<float' --arch sm_90 --sweep --smem 300K $fmt
    run occupancy --arch sm_90 --threads 2048 $fmt
  done
  run occupancy --kernel-from "$data/none.o" --threads 128
  run occupancy --kernel-from "$data/none.o" --kernel 'scale<float' --regs 3 --threads 128
  for shell in bash zsh fish tcsh ""; do
    run completion $shell
    run completion $shell --json
  done
  run
  run frob
  run frob --json
  run --frob devices
  run --version
  run --help
  run -- kernels
  for cmd in kernels occupancy completion devices attrs compile check bench-pool; do
    run "$cmd" --help
  done
  run kernels
  run kernels --json
  run kernels "$data/none.o" --frob
  if [[ -e $cusparse ]]; then
    run kernels "$cusparse" --arch sm_90 --threads 256 --json
    run kernels "$cusparse" --arch sm_90 --threads 256
    run kernels "$cusparse" --arch sm_120 --sort occupancy --threads 128
  fi
  echo "recorded $n invocations in $out"
}

compare() {
  local before=$1 after=$2 differ=0
  for f in "$before"/*.cmd; do
    local id
    id=$(basename "$f" .cmd)
    for ext in out err rc; do
      if ! cmp -s "$before/$id.$ext" "$after/$id.$ext"; then
        echo "$id.$ext differs: $(cat "$before/$id.cmd")"
        differ=$((differ + 1))
      fi
    done
  done
  echo "$differ files differ"
  [[ $differ == 0 ]]
}

case ${1:-} in
  record) record "$2" "$3" "$4" ;;
  compare) compare "$2" "$3" ;;
  *)
    echo "usage: $0 record BINARY KERNELS_DATA OUT_DIR | compare BEFORE AFTER" >&2
    exit 2
    ;;
esac
