#!/usr/bin/env bash
# `kernels --baseline` and `kernels --sizes` side by side with the plain scans they build on,
# whole processes, interleaved rounds: the comparison of two builds against
# scanning both (issue 37: at most 10% more), the size report against a plain scan (nothing
# measurable).
#
#   bench/kernels_compare.sh [CUDATOOL] [OLD] [NEW] [ROUNDS]
#   defaults: build/apps/cudatool/cudatool, libcublasLt.so.12 (from PyPI's
#   nvidia-cublas-cu12, at $OLD), $CUDA_HOME/lib64/libcublasLt.so.13, 5
set -euo pipefail
cd "$(dirname "$0")/.."
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
# Wall time and CPU time (user + system, GNU time) of each run: on a shared machine the CPU
# time is the steadier of the two.
for name in "${order[@]}"; do ${commands[$name]} >/dev/null; done  # warm the page cache
for ((r = 0; r < rounds; ++r)); do
  for name in "${order[@]}"; do
    /usr/bin/time -f '%e %U %S' -a -o "$tmp/$name" ${commands[$name]} >/dev/null
  done
done
echo "old: $old ($(stat -L -c %s "$old") bytes); new: $new ($(stat -L -c %s "$new") bytes)"
echo "$(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); load $(cut -d' ' -f1-3 /proc/loadavg); $rounds interleaved rounds, medians"
printf '%-16s %10s %10s\n' command "wall s" "cpu s"
declare -A wall cpu
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for name in "${order[@]}"; do
  wall[$name]=$(awk '{print $1}' "$tmp/$name" | median)
  cpu[$name]=$(awk '{print $2 + $3}' "$tmp/$name" | median)
  printf '%-16s %10s %10s\n' "$name" "${wall[$name]}" "${cpu[$name]}"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
for pair in compare_text:scan_both_text compare_json:scan_both_json sizes_text:scan_text sizes_json:scan_json; do
  a=${pair%%:*} b=${pair#*:}
  echo "$a / $b: cpu $(ratio "${cpu[$a]}" "${cpu[$b]}"), wall $(ratio "${wall[$a]}" "${wall[$b]}")"
done
