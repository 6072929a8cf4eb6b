#!/usr/bin/env bash
# Whole-process timings of `cudatool devices`, `attrs` and `occupancy --device` against
# `nvidia-smi -L`, the bare-driver floor (bench/bare_driver.c: cuInit + enumerate + every
# attribute) and reading /proc/driver/nvidia directly, measured side by side in one run: the
# commands are interleaved round by round, so drift of the machine hits all alike. The
# cudatool commands without --fresh answer from the device cache (warm: the warm-up run
# writes it); --fresh takes the cuInit path every time. Prints the median and p90 in ms and
# the ratio to `nvidia-smi -L`.
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
# A cache of its own, so the run neither uses nor changes the user's.
export XDG_CACHE_HOME="$work/cache"
mkdir -p "$XDG_CACHE_HOME"
declare -A commands=(
  [true]="/bin/true"
  [proc_read]="cat /proc/driver/nvidia/version /proc/driver/nvidia/gpus/*/information"
  [nvidia_smi_L]="nvidia-smi -L"
  [bare_driver]="$work/bare_driver"
  [devices]="$cudatool devices"
  [devices_json]="$cudatool devices --json"
  [devices_fresh]="$cudatool devices --fresh"
  [devices_memory]="$cudatool devices --memory-usage"
  [attrs]="$cudatool attrs"
  [attrs_fresh]="$cudatool attrs --fresh"
  [attrs_name]="$cudatool attrs multiprocessor_count"
  [occupancy_device]="$cudatool occupancy --device 0 --threads 256 --regs 32"
  [occupancy_fresh]="$cudatool occupancy --device 0 --threads 256 --regs 32 --fresh"
)
order=(true proc_read nvidia_smi_L bare_driver devices devices_json devices_fresh devices_memory
       attrs attrs_fresh attrs_name occupancy_device occupancy_fresh)
time_rounds "$rounds" "$work" "${order[@]}"  # its warm-up loads the driver, the page cache and the device cache
read -r smi _ < <(sample_stats "$work/nvidia_smi_L" 1)
printf '%-20s %10s %10s %14s\n' command median_ms p90_ms vs_nvidia_smi
for name in "${order[@]}"; do
  read -r median p90 < <(sample_stats "$work/$name" 1)
  printf '%-20s %10s %10s %14s\n' "$name" "$median" "$p90" "$(awk -v a="$median" -v b="$smi" 'BEGIN{printf "%.2fx", a/b}')"
done
echo "commands: $(for n in "${order[@]}"; do printf '%s=[%s] ' "$n" "${commands[$n]}"; done)"
echo "rounds: $rounds; machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
