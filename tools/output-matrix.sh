#!/usr/bin/env bash
# Records cudatool's stdout, stderr and exit status over a matrix of invocations, so that a
# refactoring can be checked byte for byte against the build it started from:
#
#   tools/output-matrix.sh record BINARY KERNELS_DATA OUT_DIR   # once before, once after
#   tools/output-matrix.sh compare BEFORE_DIR AFTER_DIR         # cmp of every file
#
# KERNELS_DATA is the build's tests/kernels_data (nvcc-built fixtures). Everything runs
# without a driver (CUDATOOL_LIBCUDA points nowhere) or with the tests' fake driver (check and
# bench-pool, where build/tests has it), so the output does not depend on the machine's GPU.
# compile runs with --no-cache except in the cache's own cases (a fixed directory, emptied
# first); its one varying number (the compile time) is replaced by "T" before the files are
# written, as is ptxas -v's "Compile time".
set -uo pipefail

record() {
  local bin=$1 data=$2 out=$3
  local src
  src=$(cd "$(dirname "$0")/.." && pwd)
  mkdir -p "$out"
  local n=0
  local run_env=()  # settings after the defaults (the fake driver's, below)
  local cusparse=${CUDA_HOME:-/usr/local/cuda}/lib64/libcusparse.so
  # For the next run only: with_env, more environment (NAME=VALUE); without_env, variables to
  # unset (CUDATOOL_CACHE_DIR among them: not set at all); stdin_text, its standard input.
  local with_env=() without_env=() stdin_text=""
  run() {
    n=$((n + 1))
    local id
    id=$(printf '%03d' "$n")
    local unset=() set=(CUDATOOL_LIBCUDA=/nonexistent/libcuda.so.1)
    local v
    for v in "${without_env[@]}"; do unset+=(-u "$v"); done
    [[ " ${without_env[*]} " == *" CUDATOOL_CACHE_DIR "* ]] || set+=(CUDATOOL_CACHE_DIR=/nonexistent-cache)
    printf '%s\n' "${unset[*]} ${run_env[*]} ${with_env[*]} $*" >"$out/$id.cmd"
    printf '%s' "$stdin_text" |
      env "${unset[@]}" "${set[@]}" "${run_env[@]}" "${with_env[@]}" "$bin" "$@" >"$out/$id.out" 2>"$out/$id.err"
    echo "${PIPESTATUS[1]}" >"$out/$id.rc"
    if [[ ${1:-} == compile ]]; then
      sed -i -E 's/"compile_seconds": [0-9.e+-]+/"compile_seconds": T/; s/compiled in [0-9.]+ m?s/compiled in T/; s/Compile time = [0-9.]+ ms/Compile time = T ms/g' \
        "$out/$id.out"
      # nvcc compiles a copy of an extern "C"-wrapped source in a fresh temporary directory.
      sed -i -E 's#/cudatool-nvcc-[A-Za-z0-9]{6}/#/cudatool-nvcc-XXXXXX/#g' "$out/$id.out" "$out/$id.err"
    fi
    # bench-pool's timings (and what depends on how many pairs the calibration ran) vary
    # from run to run: each is replaced by "T" in the JSON, every number by "N" in the text.
    if [[ ${1:-} == bench-pool && $(cat "$out/$id.rc") == 0 ]]; then
      if grep -q -- --json <<<"$*"; then
        sed -i -E '/"(mean_ns|median_ns|min_ns|p99_ns|seconds|samples|batch_pairs|pairs_per_second|speedup_vs_raw|peak_held_bytes|peak_requested_bytes|overhead_pct|active_block_bytes|active_blocks|active_bytes|allocator_allocations|allocator_frees|held_blocks|held_bytes|managed_bytes|peak_managed_bytes|oom_retries|holding)": /s/: [^,]*(,?)$/: T\1/' \
          "$out/$id.out"
      else
        sed -i -E '4,$ { s/[0-9]+(\.[0-9]+)?/N/g; s/ +/ /g }' "$out/$id.out"
      fi
    fi
    # check's clock readings: when it ran, how long it took, NVML's utilization window (in
    # its JSON and in the utilization check's reason).
    if [[ ${1:-} == check ]]; then
      sed -i -E 's/^cudatool_check_(timestamp_seconds|duration_seconds) .*/cudatool_check_\1 T/;
        s/"(duration_s|utilization_window_s)": [0-9.e+-]+/"\1": T/; s/ in [0-9.]+ s: / in T s: /;
        s/ readings over [0-9.]+ s\)/ readings over T s)/' \
        "$out/$id.out"
    fi
    with_env=()
    without_env=()
    stdin_text=""
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
  compile_matrix
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
  # bench-pool on the host backend (no GPU), and what it refuses before anything runs.
  local fast=(--iterations 2000 --warmup 100)
  run bench-pool "${fast[@]}"
  run bench-pool "${fast[@]}" --json
  run bench-pool "${fast[@]}" --workload uniform --order random --live 8 --json
  run bench-pool "${fast[@]}" --workload log-uniform --allocators pool --leading-bits 2
  run bench-pool "${fast[@]}" --workload log-uniform --min-size 1 --max-size 4K --json
  for bad in "--backend device" "--backend pinned --json" "--backend gpu" "--size 0" \
    "--size 200TiB" "--workload uniform --min-size 2M --max-size 1M" "--allocators stream" \
    "--allocators pool,bogus" "--pinned-flags bogus" "--live 0" "--threads 0" "--duration 0" \
    "--iterations 0" "--leading-bits 13" "--small-block 2M" "--shards 257" "--order fifo" \
    "--seed -1"; do
    # shellcheck disable=SC2086 # each case is several words
    run bench-pool $bad
  done
  # check's options, refused or run without a driver.
  for args in "" "--json" "--format prometheus" "--format json --json" "--format text --json" \
    "--only bogus" "--only compute --skip memory" "--skip identity,peer" "--min-fraction 0" \
    "--min-fraction 1.5" "--min-h2d-gbps -1" "--expect-count x" "--max-used-memory 1Q" \
    "--device 99" "--device bogus" "--min-memory 1Q" "--expect-name H100 --json"; do
    # shellcheck disable=SC2086
    run check $args
  done
  # --device refused by the library's parser (issue 21: the tool passes its flag as the
  # library's source).
  for d in banana -1 0000:zz:00.0 GPU-; do
    run attrs --device "$d"
    run occupancy --device "$d" --threads 256
    run bench-pool --backend device --device "$d" --iterations 1
  done
  # check and bench-pool through the test's fake driver and fake NVML (tests/fake_driver),
  # where this checkout has them built (FAKE_DIR, else build/tests): the engines' paths past
  # the driver's loading. The fake has no streams, kernels or copies: compute, memory and
  # the host link fail with the first entry point it lacks.
  local fake=${FAKE_DIR:-$src/build/tests}
  if [[ -e $fake/libfakecuda.so && -e $fake/libfakenvml.so ]]; then
    for setting in "CUDATOOL_NO_NVML=1" "CUDATOOL_LIBNVML=$fake/libfakenvml.so" \
      "CUDATOOL_LIBNVML=$fake/libfakenvml.so FAKE_NVML_PROCESSES=1/4242/83429425152/C" \
      "CUDATOOL_LIBNVML=$fake/libfakenvml.so FAKE_NVML_USED_MEMORY=3221225472" \
      "CUDATOOL_NO_NVML=1 FAKE_CUDA_CTX_FAIL=1" "CUDATOOL_NO_NVML=1 FAKE_CUDA_DEVICES="; do
      read -ra run_env <<<"CUDATOOL_LIBCUDA=$fake/libfakecuda.so $setting"
      for args in "" "--json" "--format prometheus" "--only identity --strict" \
        "--only identity,health --device 0 --json" "--only identity --min-cc 9.0 --json" \
        "--only identity --expect-count 3" "--only occupancy,identity --json" \
        "--only occupancy --require-idle" "--max-used-memory 1G --json" "--device 7" \
        "--only compute --device 1" "--only memory,hostlink --format prometheus"; do
        # shellcheck disable=SC2086
        run check $args
      done
      for args in "--backend device --allocators raw,pool --json" "--backend pinned" \
        "--backend device --size 100G" "--backend device --allocators stream"; do
        # shellcheck disable=SC2086
        run bench-pool "${fast[@]}" $args
      done
    done
    # --device as the library names it for the tool (issue 21: the tool passes its flag as the
    # library's source), past the driver's loading.
    read -ra run_env <<<"CUDATOOL_LIBCUDA=$fake/libfakecuda.so CUDATOOL_NO_NVML=1"
    for d in 7 0000:99:00.0 GPU-ffff; do
      run attrs --device "$d" warp_size
      run occupancy --device "$d" --threads 256
    done
    run_env=()
  fi
  echo "recorded $n invocations in $out"
}

# compile's messages, engine reasons, hints, project flags (-p) and cache commands. The files it
# writes live under a fixed directory (its path is in the output), emptied first.
compile_matrix() {
  local c=$src/tests/data/compile
  local w=${TMPDIR:-/tmp}/cudatool-output-matrix-compile
  rm -rf "$w"
  mkdir -p "$w/build" "$w/empty" "$w/cache"
  printf '#include <cstdio>\n__global__ void k(float* p) { p[0] = 1; }\n' >"$w/host_header.cu"
  printf 'void helper() {}\n__global__ void k(float* p) { helper(); p[0] = 1; }\n' >"$w/host_fn.cu"
  printf '#include "missing.h"\n__global__ void k(float* p) { p[0] = 1; }\n' >"$w/missing.cu"
  printf '#include <vector>\n__global__ void k(float* p) { p[0] = 1; }\n' >"$w/template_header.cu"
  printf '__global__ void child(float* p) { p[0] = 1; }\n__global__ void parent(float* p) { child<<<1, 1>>>(p); }\n' >"$w/launcher.cu"
  printf '__global__ void k(float* p) { p[0] = 1; }\n' >"$w/plain.cu"
  printf 'template <int N> __global__ void k(float* p) { p[0] = N; }\ntemplate __global__ void k<1>(float*);\n' >"$w/template.cu"
  printf 'extern "C" {\ntemplate <int N> __global__ void k(float* p) { p[0] = N; }\n}\n' >"$w/extern_block.cu"
  printf '__global__ void broken( {\n' >"$w/broken.cu"
  printf '   \n' >"$w/blank.cu"
  local plain=$w/plain.cu
  printf '[{"directory": "%s", "file": "%s", "arguments": ["nvcc", "-std=c++03", "-c", "%s"]}]\n' \
    "$w" "$plain" "$plain" >"$w/build/compile_commands.json"
  run compile "$plain" --no-cache --arch sm_90 -p "$w/build"
  run compile "$plain" --no-cache --arch sm_90 -p "$w/empty"
  run compile - --no-cache --arch sm_90 -p "$w/build"
  for engine in nvrtc nvcc; do
    run compile "$plain" --no-cache --arch sm_90 --compiler "$engine"
    run compile "$plain" --no-cache --arch sm_90 --compiler "$engine" --json
  done
  run compile "$w/host_header.cu" --no-cache --arch sm_90 --compiler nvrtc
  run compile "$w/host_header.cu" --no-cache --arch sm_90
  run compile "$w/host_fn.cu" --no-cache --arch sm_90 --compiler nvrtc
  run compile "$w/host_fn.cu" --no-cache --arch sm_90 --json
  run compile "$w/missing.cu" --no-cache --arch sm_90 --compiler nvcc
  run compile "$w/missing.cu" --no-cache --arch sm_90 --compiler nvrtc
  run compile "$w/template_header.cu" --no-cache --arch sm_90 --extern-c --compiler nvrtc
  run compile "$w/template.cu" --no-cache --arch sm_90 --extern-c
  run compile "$w/template.cu" --no-cache --arch sm_90 --extern-c --compiler nvcc
  run compile "$w/extern_block.cu" --no-cache --arch sm_90
  run compile "$w/launcher.cu" --no-cache --arch sm_90 --compiler nvrtc
  run compile "$w/launcher.cu" --no-cache --arch sm_90
  run compile "$w/launcher.cu" --no-cache --arch sm_90 --json
  run compile "$w/broken.cu" --no-cache --arch sm_90
  run compile "$w/broken.cu" --no-cache --arch sm_90 --compiler nvcc
  run compile "$w/blank.cu" --no-cache --arch sm_90
  run compile "$plain" --no-cache --arch sm_90 -Xnvcc -O3
  run compile "$plain" --no-cache --arch sm_90 -Xnvcc -O3 --json
  run compile "$plain" --no-cache --arch sm_90 -Xnvcc --extended-lambda
  run compile "$plain" --no-cache --arch sm_90 -Xnvcc -O3 --compiler nvrtc
  run compile "$plain" --no-cache --arch sm_90 -Xnvrtc -lineinfo --compiler nvcc
  run compile "$plain" --no-cache --arch sm_90 -Xnvrtc -lineinfo -Xnvcc -O3
  with_env=(CUDATOOL_DEFAULT_NVCC_FLAGS=-O3)
  run compile "$plain" --no-cache --arch sm_90 --json
  with_env=(CUDATOOL_DEFAULT_NVRTC_FLAGS=-lineinfo)
  run compile "$plain" --no-cache --arch sm_90 --compiler nvcc
  run compile "$plain" --no-cache --arch sm_90 --maxrregcount 300
  run compile "$plain" --no-cache --arch sm_90 --maxrregcount 32 --std c++17 -DN=4 -I "$w" --rdc -G \
    --lineinfo --use_fast_math -Xptxas -v --json
  run compile "$plain" --no-cache --arch sm_90 --std c++03
  run compile "$plain" --no-cache --arch sm_88
  run compile "$plain" --no-cache --arch sm_88 --compiler nvrtc
  for a in sm_87 sm_89 sm_101 sm_110 sm_121 sm_99; do
    run compile "$plain" --no-cache --arch "$a"
  done
  run compile "$plain" --no-cache --arch compute_90 --cubin
  run compile "$plain" --no-cache --arch compute_90 --threads 128
  run compile "$plain" --no-cache --arch compute_90 --json
  run compile "$plain" --no-cache --arch sm_90,sm_100 -o "$w/out.cubin"
  run compile "$plain" --no-cache --arch sm_90,sm_100 --load
  run compile "$plain" --no-cache --arch sm_90 -o "$w/out.cubin"
  run compile "$plain" --no-cache --arch sm_90 -o "$w/nowhere/out.cubin"
  run compile "$plain" --no-cache --arch sm_90 -o "$w"
  run compile "$plain" --no-cache --arch sm_90 --load
  run compile "$plain" --no-cache
  run compile "$w/nonexistent.cu" --no-cache --arch sm_90
  run compile "$w" --no-cache --arch sm_90
  run compile --no-cache --arch sm_90
  stdin_text='__global__ void k(float* p) { p[0] = 1; }'
  run compile - --no-cache --arch sm_90 --json
  stdin_text='#include <vector>
__global__ void k(float* p) { p[0] = 1; }'
  run compile - --no-cache --arch sm_90 --compiler nvrtc
  stdin_text='__global__ void k(float* p) { p[0] = 1; }'
  run compile - --no-cache --arch sm_90 --no-extern-c
  run compile "$c/multi.cu" --no-cache --arch sm_80,sm_90 --json --threads 128
  run compile "$c/saxpy.cu" --no-cache --arch sm_90 --ptx
  # The cache: a miss, a hit, the statistics, a trim and a clear, text and JSON.
  run compile "$plain" --arch sm_90 --cache-dir "$w/cache" --json
  run compile "$plain" --arch sm_90 --cache-dir "$w/cache"
  run compile "$plain" --arch sm_90 --cache-dir "$w/cache" --compiler nvcc
  run compile "$plain" --arch sm_90 --cache-dir "$w/cache" --compiler nvcc --json
  run compile --cache-stats --cache-dir "$w/cache"
  run compile --cache-stats --cache-dir "$w/cache" --json
  run compile "$plain" --cache-stats --cache-dir "$w/cache"
  run compile --cache-trim lots --cache-dir "$w/cache"
  run compile --cache-trim 1 --cache-dir "$w/cache"
  run compile --cache-clear --cache-dir "$w/cache" --json
  run compile --cache-clear --cache-dir "$w/cache"
  without_env=(CUDATOOL_CACHE_DIR XDG_CACHE_HOME)
  with_env=(HOME=/nonexistent-home)
  run compile "$plain" --arch sm_90
  without_env=(CUDATOOL_CACHE_DIR XDG_CACHE_HOME HOME)
  run compile --cache-stats --json
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
