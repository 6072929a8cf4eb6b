#!/usr/bin/env bash
# Whole-process timings of `cudatool compile` against `nvcc -cubin` on the same small
# kernel, measured side by side in one run (interleaved round by round, so drift of the
# machine hits all alike). No GPU needed: --arch is given.
#   nvcc_cubin          nvcc -cubin -arch ARCH (what PyCUDA's SourceModule runs)
#   cudatool_cold       cudatool compile --no-cache (NVRTC loaded and run in-process)
#   cudatool_nvcc_cold  cudatool compile --compiler nvcc --no-cache
#   cudatool_cache_hit  cudatool compile with the entry already in the cache
#   cudatool_version    cudatool --version: the process's own start-up, for scale
# Prints the median and p90 in ms and the ratios the goals are stated in (cold <= 0.5x
# nvcc; a cache hit <= 10 ms and >= 20x faster than cold).
# Usage: bench/compile.sh [CUDATOOL] [ROUNDS] [ARCH]
set -euo pipefail
source "$(dirname "$0")/timing.sh"
cudatool=${1:-cudatool}
rounds=${2:-20}
arch=${3:-sm_90}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
nvcc=${NVCC:-$cuda_home/bin/nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/kernel.cu" <<'KERNEL'
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
KERNEL
export CUDATOOL_CACHE_DIR="$work/cache"
unset CUDATOOL_DISABLE_CACHE CUDATOOL_DEFAULT_NVRTC_FLAGS CUDATOOL_DEFAULT_NVCC_FLAGS
declare -A commands=(
  [nvcc_cubin]="$nvcc -cubin -arch $arch -o $work/nvcc.cubin $work/kernel.cu"
  [cudatool_cold]="$cudatool compile $work/kernel.cu --arch $arch --no-cache"
  [cudatool_nvcc_cold]="$cudatool compile $work/kernel.cu --arch $arch --no-cache --compiler nvcc"
  [cudatool_cache_hit]="$cudatool compile $work/kernel.cu --arch $arch"
  [cudatool_version]="$cudatool --version"
)
order=(nvcc_cubin cudatool_cold cudatool_nvcc_cold cudatool_cache_hit cudatool_version)
time_rounds "$rounds" "$work" "${order[@]}"  # its warm-up fills the cache
declare -A median
printf '%-22s %10s %10s\n' command median_ms p90_ms
for name in "${order[@]}"; do
  read -r m p < <(sample_stats "$work/$name" 1)
  median[$name]=$m
  printf '%-22s %10s %10s\n' "$name" "$m" "$p"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a/b}'; }
echo "cold / nvcc -cubin:     $(ratio "${median[cudatool_cold]}" "${median[nvcc_cubin]}")x (goal <= 0.5x)"
echo "cache hit:              ${median[cudatool_cache_hit]} ms (goal <= 10 ms)"
echo "cold / cache hit:       $(ratio "${median[cudatool_cold]}" "${median[cudatool_cache_hit]}")x (goal >= 20x)"
echo "rounds: $rounds; arch: $arch; load average: $(cut -d" " -f1-3 /proc/loadavg); $("$nvcc" --version | tail -1); machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
