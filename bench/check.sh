#!/usr/bin/env bash
# Whole-process timings of `cudatool check` (all checks, and --only health) against
# `cudatool devices` (the floor: cuInit and enumeration), interleaved round by round.
# Prints the median and p90 in ms. Usage: bench/check.sh [CUDATOOL] [ROUNDS] (on a GPU machine)
set -euo pipefail
source "$(dirname "$0")/timing.sh"
cudatool=${1:-cudatool}
rounds=${2:-10}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A commands=(
  [cudatool_devices]="$cudatool devices"
  [check_all]="$cudatool check"
  [check_health]="$cudatool check --only health"
  [check_compute]="$cudatool check --only compute"
)
order=(cudatool_devices check_health check_compute check_all)
time_rounds "$rounds" "$work" "${order[@]}"
printf '%-20s %10s %10s\n' command median_ms p90_ms
for name in "${order[@]}"; do
  read -r median p90 < <(sample_stats "$work/$name" 1)
  printf '%-20s %10s %10s\n' "$name" "$median" "$p90"
done
echo "rounds: $rounds; machine: $(nproc) cores; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -3 | tr '\n' ';')"
