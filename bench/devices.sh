#!/usr/bin/env bash
# Whole-process timings of `cudatool devices` and `cudatool attrs` against the bare-driver
# floor (bench/bare_driver.c: cuInit + enumerate + every attribute) and `nvidia-smi -L`,
# measured side by side in one run: the commands are interleaved round by round, so drift
# of the machine hits all alike. Prints the median and p90 in ms and the ratio to the floor.
# Usage: bench/devices.sh [CUDATOOL] [ROUNDS]   (on a GPU machine; needs gcc and the driver)
set -euo pipefail
source "$(dirname "$0")/timing.sh"
cudatool=${1:-cudatool}
rounds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cuda_home=${CUDA_HOME:-/usr/local/cuda}
echo "building the bare-driver floor program" >&2
cc=$(command -v gcc || command -v cc || command -v g++) || { echo "devices.sh: no C compiler" >&2; exit 1; }
"$cc" -O2 -x c -o "$work/bare_driver" "$here/bare_driver.c" -I"$cuda_home/include" -lcuda ||
  { echo "devices.sh: cannot build bare_driver.c against the driver" >&2; exit 1; }
"$work/bare_driver" >/dev/null || { echo "devices.sh: bare_driver failed (no driver?)" >&2; exit 1; }
declare -A commands=(
  [bare_driver]="$work/bare_driver"
  [cudatool_devices]="$cudatool devices"
  [cudatool_devices_memory]="$cudatool devices --memory-usage"
  [cudatool_attrs]="$cudatool attrs"
  [nvidia_smi_L]="nvidia-smi -L"
)
order=(bare_driver cudatool_devices cudatool_devices_memory cudatool_attrs nvidia_smi_L)
time_rounds "$rounds" "$work" "${order[@]}"  # its warm-up loads the driver and the page cache
read -r floor _ < <(sample_stats "$work/bare_driver" 1)
printf '%-28s %10s %10s %8s\n' command median_ms p90_ms vs_floor
for name in "${order[@]}"; do
  read -r median p90 < <(sample_stats "$work/$name" 1)
  printf '%-28s %10s %10s %8s\n' "$name" "$median" "$p90" "$(awk -v a="$median" -v b="$floor" 'BEGIN{printf "%.2fx", a/b}')"
done
echo "rounds: $rounds; machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
