#!/usr/bin/env bash
# Whole-process timings of `cudatool devices` and `cudatool attrs` against the bare-driver
# floor (bench/bare_driver.c: cuInit + enumerate + every attribute) and `nvidia-smi -L`,
# measured side by side in one run: the commands are interleaved round by round, so drift
# of the machine hits all alike. Prints the median and p90 in ms and the ratio to the floor.
# Usage: bench/devices.sh [CUDATOOL] [ROUNDS]   (on a GPU machine; needs gcc and the driver)
set -euo pipefail
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
  [cudatool_devices_no_nvml]="$cudatool devices --no-memory-usage"
  [cudatool_attrs]="$cudatool attrs"
  [nvidia_smi_L]="nvidia-smi -L"
)
order=(bare_driver cudatool_devices cudatool_devices_no_nvml cudatool_attrs nvidia_smi_L)
for name in "${order[@]}"; do ${commands[$name]} >/dev/null; done  # warm-up: page cache, driver
for ((r = 0; r < rounds; ++r)); do
  for name in "${order[@]}"; do
    start=$(date +%s%N)
    ${commands[$name]} >/dev/null
    end=$(date +%s%N)
    echo "$(( (end - start) / 1000 ))" >>"$work/$name"
  done
done
stat() {  # median and p90 of microsecond samples, in ms
  sort -n "$1" | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; p=a[int(NR*0.9+0.5)]; printf "%.1f %.1f\n", m/1000, p/1000}'
}
read -r floor _ < <(stat "$work/bare_driver")
printf '%-28s %10s %10s %8s\n' command median_ms p90_ms vs_floor
for name in "${order[@]}"; do
  read -r median p90 < <(stat "$work/$name")
  printf '%-28s %10s %10s %8s\n' "$name" "$median" "$p90" "$(awk -v a="$median" -v b="$floor" 'BEGIN{printf "%.2fx", a/b}')"
done
echo "rounds: $rounds; machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
