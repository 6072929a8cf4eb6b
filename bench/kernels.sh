#!/usr/bin/env bash
# `cudatool kernels` against `cuobjdump --dump-resource-usage` on one large library, whole
# process, side by side: wall time, CPU time and peak resident memory (GNU time -v), over
# ROUNDS interleaved rounds (median, and the spread min..max).
#
#   bench/kernels.sh [CUDATOOL] [FILE] [ROUNDS]
#   defaults: build/apps/cudatool/cudatool, $CUDA_HOME/lib64/libcublasLt.so.13, 3
#   CPUS=0,1   run both tools on these CPUs only (taskset): a 2-core machine on a larger one
#   FLOOR=PATH bench_zstd_floor (default: build/bench/bench_zstd_floor beside CUDATOOL's
#              build): decompression alone on the same CPUs, of every entry (the floor under
#              any tool that reads every entry) and of each distinct entry once (the floor
#              under kernels, which reads repeats once), and the largest ratio each leaves
#              against cuobjdump
#   ONE_THREAD=N  then N interleaved rounds of `kernels --json --jobs 1` and the floor on
#              one thread: cudatool's user time against the floor's CPU time (issue 19:
#              within 10%)
set -euo pipefail
cudatool=${1:-build/apps/cudatool/cudatool}
file=${2:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so.13}
rounds=${3:-3}
cuobjdump=$(command -v cuobjdump || true)
[[ -n $cuobjdump ]] || { echo "kernels.sh: cuobjdump is not on PATH (pip install nvidia-cuda-cuobjdump)" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "kernels.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pin=()
if [[ -n ${CPUS:-} ]]; then pin=(taskset -c "$CPUS"); fi
declare -A commands=(
  [cudatool_all]="$cudatool kernels --json $file"
  [cuobjdump_all]="$cuobjdump --dump-resource-usage $file"
  [cudatool_sm90]="$cudatool kernels --json --arch sm_90 $file"
  [cuobjdump_sm90]="$cuobjdump -arch sm_90 --dump-resource-usage $file"
)
order=(cudatool_all cuobjdump_all cudatool_sm90 cuobjdump_sm90)
for ((r = 0; r < rounds; ++r)); do
  for name in "${order[@]}"; do
    # Wall time from the clock around the process (GNU time's is in hundredths); CPU time
    # and peak resident memory from GNU time.
    start=$(date +%s%N)
    "${pin[@]}" /usr/bin/time -v ${commands[$name]} >/dev/null 2>"$tmp/time"
    end=$(date +%s%N)
    awk -F': ' -v w="$(( (end - start) / 1000 ))" '
                /User time/ { u = $2 } /System time/ { sy = $2 }
                /Maximum resident set size/ { m = $2 }
                END { printf "%.4f %s %s\n", w / 1e6, u + sy, m }' "$tmp/time" >>"$tmp/$name"
  done
done

echo "file: $file ($(stat -L -c %s "$file") bytes); $("${pin[@]}" nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); $rounds rounds"
echo "$($cuobjdump --version | tail -1)"
printf '%-16s %10s %18s %10s %12s\n' command "wall s" "wall min..max" "cpu s" "peak RSS MB"
declare -A median
for name in "${order[@]}"; do
  line=$(sort -n "$tmp/$name" | awk -v n="$name" '{w[NR]=$1; c[NR]=$2; m[NR]=$3} END {
    mid = int((NR + 1) / 2); printf "%-16s %10.3f %8.3f..%-8.3f %10.2f %12.0f\n", n, w[mid], w[1], w[NR], c[mid], m[mid] / 1024 }')
  echo "$line"
  median[$name]=$(awk '{print $2}' <<<"$line")
done
awk -v a="${median[cuobjdump_all]}" -v b="${median[cudatool_all]}" -v c="${median[cuobjdump_sm90]}" -v d="${median[cudatool_sm90]}" \
  'BEGIN { printf "cuobjdump / cudatool, median wall: all architectures %.1fx, --arch sm_90 %.1fx\n", a / b, c / d }'

# The floors: every compressed entry decompressed and nothing else, and each distinct one
# once (entries whose compressed bytes repeat another's are read once, as `kernels` reads
# them), on as many threads as CPUs (their own Google Benchmark run after the rounds, not
# interleaved with them).
floor=${FLOOR:-$(dirname "$cudatool")/../../bench/bench_zstd_floor}
if [[ -x $floor ]]; then
  cpus=$("${pin[@]}" nproc)
  CUDATOOL_BENCH_FILE=$file "${pin[@]}" "$floor" --benchmark_filter="/$cpus/" 2>/dev/null >"$tmp/floors" || true
  for bench in EveryEntry:"decompression alone (bench_zstd_floor), every entry" \
    EachDistinctEntry:"decompression alone, each distinct entry once (what kernels reads)"; do
    name=BM_Decompress${bench%%:*}/$cpus/
    ms=$(awk -v n="$name" 'index($1, n) == 1 { print $2 }' "$tmp/floors")
    [[ -n $ms ]] || continue
    awk -v ms="$ms" -v n="$cpus" -v what="${bench#*:}" -v a="${median[cuobjdump_all]}" -v b="${median[cudatool_all]}" 'BEGIN {
      printf "%s on %d threads: %.3f s; cudatool_all is %.2fx that floor; the largest ratio against cuobjdump_all that it leaves: %.1fx\n", what, n, ms / 1000, b / (ms / 1000), a / (ms / 1000) }'
  done
else
  echo "(no bench_zstd_floor at $floor: the decompression floor is not measured)"
fi

# One thread: cudatool's user time against decompression alone (each floor's CPU seconds,
# every thread's, per iteration), round by round, medians.
if [[ -n ${ONE_THREAD:-} && -x $floor ]]; then
  for ((r = 0; r < ONE_THREAD; ++r)); do
    CUDATOOL_BENCH_FILE=$file "${pin[@]}" "$floor" --benchmark_filter="/1/" 2>/dev/null >"$tmp/floors1" || true
    for bench in EveryEntry EachDistinctEntry; do
      awk -v n="BM_Decompress$bench/1/" 'index($1, n) == 1' "$tmp/floors1" |
        grep -o 'cpu_s=[0-9.]*' | cut -d= -f2 >>"$tmp/floor1-$bench"
    done
    "${pin[@]}" /usr/bin/time -f '%U %S' -a -o "$tmp/one" $cudatool kernels --json --jobs 1 "$file" >/dev/null
  done
  median_of() { sort -n "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
  f=$(median_of "$tmp/floor1-EveryEntry")
  d=$(median_of "$tmp/floor1-EachDistinctEntry")
  u=$(median_of "$tmp/one")
  s=$(sort -n -k2 "$tmp/one" | awk '{v[NR]=$2} END {print v[int((NR+1)/2)]}')
  awk -v f="$f" -v d="$d" -v u="$u" -v s="$s" -v n="$ONE_THREAD" 'BEGIN {
    printf "one thread, %d rounds, medians: cudatool --jobs 1 user %.3f s (system %.3f s); decompression alone %.3f CPU-s (each distinct entry once: %.3f); user / floor %.2fx (%.2fx)\n", n, u, s, f, d, u / f, u / d }'
fi
