#!/usr/bin/env bash
# `cudatool kernels` against `cuobjdump --dump-resource-usage` on one large library, whole
# process, side by side: wall time, CPU time and peak resident memory (GNU time -v), over
# ROUNDS interleaved rounds (median, and the spread min..max).
#
#   bench/kernels.sh [CUDATOOL] [FILE] [ROUNDS]
#   defaults: build/apps/cudatool/cudatool, $CUDA_HOME/lib64/libcublasLt.so.13, 3
set -euo pipefail
cudatool=${1:-build/apps/cudatool/cudatool}
file=${2:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so.13}
rounds=${3:-3}
cuobjdump=$(command -v cuobjdump || true)
[[ -n $cuobjdump ]] || { echo "kernels.sh: cuobjdump is not on PATH (pip install nvidia-cuda-cuobjdump)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "kernels.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

declare -A commands=(
  [cudatool_all]="$cudatool kernels --json $file"
  [cuobjdump_all]="$cuobjdump --dump-resource-usage $file"
  [cudatool_sm90]="$cudatool kernels --json --arch sm_90 $file"
  [cuobjdump_sm90]="$cuobjdump -arch sm_90 --dump-resource-usage $file"
)
order=(cudatool_all cuobjdump_all cudatool_sm90 cuobjdump_sm90)
for ((r = 0; r < rounds; ++r)); do
  for name in "${order[@]}"; do
    /usr/bin/time -v ${commands[$name]} >/dev/null 2>"$tmp/time"
    awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); w = t[n] + (n > 1 ? 60 * t[n-1] : 0) }
                /User time/ { u = $2 } /System time/ { sy = $2 }
                /Maximum resident set size/ { m = $2 }
                END { printf "%s %s %s\n", w, u + sy, m }' "$tmp/time" >>"$tmp/$name"
  done
done

echo "file: $file ($(stat -c %s "$file") bytes); $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); $rounds rounds"
echo "$($cuobjdump --version | tail -1)"
printf '%-16s %10s %16s %10s %12s\n' command "wall s" "wall min..max" "cpu s" "peak RSS MB"
for name in "${order[@]}"; do
  sort -n "$tmp/$name" | awk -v n="$name" '{w[NR]=$1; c[NR]=$2; m[NR]=$3} END {
    mid = int((NR + 1) / 2); printf "%-16s %10.2f %7.2f..%-7.2f %10.2f %12.0f\n", n, w[mid], w[1], w[NR], c[mid], m[mid] / 1024 }'
done
