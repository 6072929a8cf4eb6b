#!/usr/bin/env bash
# Whole-process timings of `cudatool compile` against `nvcc -cubin` on three kernels,
# measured side by side in one run (interleaved round by round, so drift of the machine
# hits all alike). No GPU needed: --arch is given.
#   small: a saxpy kernel (device code only: cudatool picks NVRTC)
#   cg:    a cooperative-groups grid-sync reduction (device code only: NVRTC)
#   cub:   a CUB BlockRadixSort kernel (CUB: cudatool picks nvcc, see compile(1))
# For each: nvcc -cubin (what the user's build runs), cudatool cold (--no-cache), and a
# cache hit; then the CUB file's hit is the goal's figure (a hit <= 10 ms for a file that
# includes CUB, whatever it includes), and `cudatool --version` gives process start-up.
# Usage: bench/compile.sh [CUDATOOL] [ROUNDS] [ARCH]
set -euo pipefail
source "$(dirname "$0")/timing.sh"
cudatool=${1:-cudatool}
rounds=${2:-10}
arch=${3:-sm_90}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$cuda_home/bin/nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/small.cu" <<'KERNEL'
__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
KERNEL
cat >"$work/cg.cu" <<'KERNEL'
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void grid_total(const float* in, float* partial, float* total, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  __shared__ float sum;
  if (block.thread_rank() == 0) sum = 0.0f;
  block.sync();
  float v = 0.0f;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
  atomicAdd(&sum, v);
  block.sync();
  if (block.thread_rank() == 0) partial[blockIdx.x] = sum;
  grid.sync();
  if (grid.thread_rank() == 0) {
    float t = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) t += partial[b];
    *total = t;
  }
}
KERNEL
cat >"$work/cub.cu" <<'KERNEL'
#include <cub/block/block_radix_sort.cuh>
__global__ void sort_tiles(unsigned* keys) {
  using Sort = cub::BlockRadixSort<unsigned, 128, 4>;
  __shared__ typename Sort::TempStorage storage;
  unsigned items[4];
  for (int i = 0; i < 4; ++i) items[i] = keys[(blockIdx.x * 128 + threadIdx.x) * 4 + i];
  Sort(storage).Sort(items);
  for (int i = 0; i < 4; ++i) keys[(blockIdx.x * 128 + threadIdx.x) * 4 + i] = items[i];
}
KERNEL
export CUDATOOL_CACHE_DIR="$work/cache"
unset CUDATOOL_DISABLE_CACHE CUDATOOL_DEFAULT_NVRTC_FLAGS CUDATOOL_DEFAULT_NVCC_FLAGS
declare -A commands=([cudatool_version]="$cudatool --version")
order=()
for k in small cg cub; do
  commands[${k}_nvcc_cubin]="$nvcc -cubin -arch $arch -o $work/$k.cubin $work/$k.cu"
  commands[${k}_cudatool_cold]="$cudatool compile $work/$k.cu --arch $arch --no-cache"
  commands[${k}_cudatool_hit]="$cudatool compile $work/$k.cu --arch $arch"
  order+=("${k}_nvcc_cubin" "${k}_cudatool_cold" "${k}_cudatool_hit")
done
order+=(cudatool_version)
time_rounds "$rounds" "$work" "${order[@]}"  # its warm-up fills the cache
declare -A median
printf '%-22s %10s %10s\n' command median_ms p90_ms
for name in "${order[@]}"; do
  read -r m p < <(sample_stats "$work/$name" 1)
  median[$name]=$m
  printf '%-22s %10s %10s\n' "$name" "$m" "$p"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
for k in small cg cub; do
  engine=$("$cudatool" compile "$work/$k.cu" --arch "$arch" --json | sed -n 's/.*"engine": *"\([a-z]*\)".*/\1/p' | head -1)
  echo "$k: engine $engine; cold / nvcc -cubin: $(ratio "${median[${k}_cudatool_cold]}" "${median[${k}_nvcc_cubin]}")x; cache hit ${median[${k}_cudatool_hit]} ms"
done
echo "cache hit, file including CUB: ${median[cub_cudatool_hit]} ms (goal <= 10 ms)"
echo "rounds: $rounds; arch: $arch; load average: $(cut -d" " -f1-3 /proc/loadavg); $("$nvcc" --version | tail -1); machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
