#!/usr/bin/env bash
# kernels() from Python against the CLI, whole process each (issue 23: within 10%):
#   python -c 'import cudatool; cudatool.kernels([FILE])'
#   cudatool kernels --json FILE > /dev/null
# interleaved over ROUNDS rounds; prints each run's wall and user time, peak memory and
# minor page faults (GNU time), then the medians and the ratios of the medians.
#
#   bench/python_kernels.sh PYTHON CUDATOOL [FILE] [ROUNDS]
#   PYTHON: a python where `import cudatool` is the module to measure (the wheel installed in
#   a venv, tools/test-wheel.sh leaves one in build-wheel/fresh); CUDATOOL: the executable
#   (the same wheel's: build-wheel/fresh/lib/python3*/site-packages/cudatool.scripts/cudatool)
#   defaults: $CUDA_HOME/lib64/libcublasLt.so.13, 5 rounds
#   CPUS=0-15   run both on these CPUs only (taskset)
set -euo pipefail
python=$1
cudatool=$2
file=${3:-${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so.13}
rounds=${4:-5}
[[ -x /usr/bin/time ]] || { echo "python_kernels.sh: needs GNU time at /usr/bin/time" >&2; exit 1; }
pin=()
if [[ -n ${CPUS:-} ]]; then pin=(taskset -c "$CPUS"); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "python_kernels.sh: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  file: $file ($(stat -Lc %s "$file") bytes); $("$cudatool" --version | head -1); $("$python" --version)"
# One untimed run of each: the file in the page cache for both.
"$cudatool" kernels --json --no-progress "$file" > /dev/null
code="import cudatool; cudatool.kernels([$("$python" -c 'import sys; print(repr(sys.argv[1]))' "$file")])"
for round in $(seq "$rounds"); do
  /usr/bin/time -o "$tmp/cli.$round" -f '%e %U %S %M %R' "${pin[@]}" \
    "$cudatool" kernels --json --no-progress "$file" > /dev/null
  /usr/bin/time -o "$tmp/py.$round" -f '%e %U %S %M %R' "${pin[@]}" "$python" -c "$code"
  printf '  round %d: cli %s  python %s   (wall user sys s, peak KB, minor faults)\n' "$round" \
    "$(cat "$tmp/cli.$round")" "$(cat "$tmp/py.$round")"
done
median() {  # median of column $2 of the files $1.*
  for f in "$tmp/$1".*; do cut -d' ' -f"$2" "$f"; done | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}
for column in 1:wall 2:user; do
  n=${column%%:*}
  cli=$(median cli "$n")
  py=$(median py "$n")
  awk -v what="${column#*:}" -v cli="$cli" -v py="$py" -v r="$rounds" 'BEGIN {
    printf "  median %s of %d: cli %.3f s, python %.3f s: %+.1f%%\n", what, r, cli, py, (py / cli - 1) * 100 }'
done
