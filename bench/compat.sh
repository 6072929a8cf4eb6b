#!/usr/bin/env bash
# `cudatool compat` over every shared library of a Python environment against cuobjdump's
# listing of the same files (`cuobjdump --list-elf --list-ptx`, file by file, what people
# run by hand), side by side in one run, on 2 CPUs (taskset -c 0,1) with a warm page cache.
# Also one wheel, where WHEEL is given. Prints each one's median of 3 runs and the ratio.
# Usage: bash bench/compat.sh CUDATOOL SITE_PACKAGES [WHEEL]     (RUNS=N runs each; default 3)
set -uo pipefail
ct=$1
site=$2
wheel=${3:-}
cpus="taskset -c 0,1"
mapfile -t libs < <(find "$site" -type f \( -name '*.so' -o -name '*.so.*' \) | sort)
bytes=$(cat "${libs[@]}" | wc -c)   # also warms the page cache
echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), timed on 2 (taskset -c 0,1)"
echo "input: ${#libs[@]} shared libraries, $((bytes / 1000000)) MB, under $site"
now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }
t_compat=() t_cuobjdump=()
for run in $(seq "${RUNS:-3}"); do
  s=$(now); $cpus "$ct" compat --arch sm_90 "$site" >/dev/null 2>&1; e=$(now)
  t_compat+=("$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b - a}')")
  s=$(now); $cpus "$ct" compat --arch sm_90 "$site" >/dev/null 2>&1; e=$(now)
  t_compat+=("$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b - a}')")
  s=$(now)
  for f in "${libs[@]}"; do $cpus cuobjdump --list-elf --list-ptx "$f" >/dev/null 2>&1; done
  e=$(now)
  t_cuobjdump+=("$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b - a}')")
done
c=$(median "${t_compat[@]}")
o=$(median "${t_cuobjdump[@]}")
echo "cudatool compat --arch sm_90 SITE: ${c} s (runs: ${t_compat[*]})"
echo "cuobjdump --list-elf --list-ptx, file by file: ${o} s (runs: ${t_cuobjdump[*]})"
echo "ratio: $(awk -v a="$o" -v b="$c" 'BEGIN{printf "%.1f", a / b}')x"
if [ -n "$wheel" ]; then
  w=()
  for run in 1 2 3; do s=$(now); $cpus "$ct" compat --arch sm_90 "$wheel" >/dev/null 2>&1; e=$(now); w+=("$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b - a}')"); done
  # Its reading time: every member inflated, by unzip where there is one, else by Python's
  # zipfile (which adds the interpreter's start, about 20 ms).
  if command -v unzip >/dev/null; then
    reader=(unzip -p "$wheel") reader_name="unzip -p"
  else
    reader=(python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.read(n) for n in z.namelist()]' "$wheel")
    reader_name="python3 zipfile"
  fi
  u=()
  for run in 1 2 3; do s=$(now); $cpus "${reader[@]}" >/dev/null 2>&1; e=$(now); u+=("$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.3f", b - a}')"); done
  echo "one wheel ($(basename "$wheel"), $(($(stat -c %s "$wheel") / 1000000)) MB): compat $(median "${w[@]}") s (runs: ${w[*]}); ${reader_name} (its reading time) $(median "${u[@]}") s (runs: ${u[*]})"
fi
