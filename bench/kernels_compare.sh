#!/usr/bin/env bash
# `kernels --baseline` and `kernels --sizes` side by side with the plain scans they build on,
# whole processes, interleaved rounds (bench/timing.sh): the comparison of two builds against
# scanning both (issue 37: at most 10% more), the size report against a plain scan (nothing
# measurable).
#
#   bench/kernels_compare.sh [CUDATOOL] [OLD] [NEW] [ROUNDS]
#   defaults: build/apps/cudatool/cudatool, libcublasLt.so.12 (from PyPI's
#   nvidia-cublas-cu12, at $OLD), $CUDA_HOME/lib64/libcublasLt.so.13, 5
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/timing.sh
cudatool=${1:-build/apps/cudatool/cudatool}
old=${2:-${OLD:?OLD: the baseline library (libcublasLt.so.12)}}
new=${3:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so.13}
rounds=${4:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
k="$cudatool kernels --no-progress"
declare -A commands=(
  [scan_both_text]="$k $old $new"
  [compare_text]="$k --baseline $old $new"
  [scan_both_json]="$k --json $old $new"
  [compare_json]="$k --json --baseline $old $new"
  [scan_text]="$k $new"
  [sizes_text]="$k --sizes $new"
  [scan_json]="$k --json $new"
  [sizes_json]="$k --sizes --json $new"
)
order=(scan_both_text compare_text scan_both_json compare_json scan_text sizes_text scan_json sizes_json)
time_rounds "$rounds" "$tmp" "${order[@]}"
echo "old: $old ($(stat -L -c %s "$old") bytes); new: $new ($(stat -L -c %s "$new") bytes)"
echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); $rounds interleaved rounds, ms"
printf '%-16s %10s %10s\n' command median p90
declare -A median
for name in "${order[@]}"; do
  read -r m p < <(sample_stats "$tmp/$name")
  median[$name]=$m
  printf '%-16s %10s %10s\n' "$name" "$m" "$p"
done
ratio() { awk -v a="${median[$1]}" -v b="${median[$2]}" 'BEGIN { printf "%.3f", a / b }'; }
echo "compare / scan both: text $(ratio compare_text scan_both_text), json $(ratio compare_json scan_both_json)"
echo "sizes / plain scan: text $(ratio sizes_text scan_text), json $(ratio sizes_json scan_json)"
