#!/usr/bin/env bash
# Whole-process timings of `cudatool occupancy --arch` (no GPU, no driver: the
# architecture table is compiled in), measured side by side in one run: the commands are
# interleaved round by round, so drift of the machine hits all alike.
#   occupancy        --arch sm_90 --threads 256 --regs 37 --smem 10K (text)
#   occupancy_json   the same with --json
#   sweep            --arch sm_90 --sweep --regs 37 --smem 10K (32 block sizes + suggestion)
#   sweep_regs       --arch sm_90 --threads 256 --regs 37 --sweep-regs (256 records)
#   version          cudatool --version: the process's own start-up, for scale
# Prints the median and p90 in ms; the goal is occupancy <= 5 ms on a 2-core machine.
# Usage: bench/occupancy_cli.sh [CUDATOOL] [ROUNDS]
set -euo pipefail
source "$(dirname "$0")/timing.sh"
cudatool=${1:-cudatool}
rounds=${2:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A driver that cannot load: any attempt to touch it would fail the run.
export CUDATOOL_LIBCUDA=/nonexistent/libcuda.so.1
declare -A commands=(
  [occupancy]="$cudatool occupancy --arch sm_90 --threads 256 --regs 37 --smem 10K"
  [occupancy_json]="$cudatool occupancy --arch sm_90 --threads 256 --regs 37 --smem 10K --json"
  [sweep]="$cudatool occupancy --arch sm_90 --sweep --regs 37 --smem 10K"
  [sweep_regs]="$cudatool occupancy --arch sm_90 --threads 256 --regs 37 --sweep-regs"
  [version]="$cudatool --version"
)
order=(occupancy occupancy_json sweep sweep_regs version)
time_rounds "$rounds" "$work" "${order[@]}"
declare -A median
printf '%-16s %10s %10s\n' command median_ms p90_ms
for name in "${order[@]}"; do
  read -r m p < <(sample_stats "$work/$name" 2)
  median[$name]=$m
  printf '%-16s %10s %10s\n' "$name" "$m" "$p"
done
echo "occupancy: ${median[occupancy]} ms (goal <= 5 ms); above start-up: $(awk -v a="${median[occupancy]}" -v b="${median[version]}" 'BEGIN{printf "%.2f", a-b}') ms"
echo "rounds: $rounds; load average: $(cut -d" " -f1-3 /proc/loadavg); machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
