#!/usr/bin/env bash
# `cudatool compat` against the driver on a GPU machine, after a build (bash .deps/on-device.sh
# -- bash tools/gpu-compat.sh BUILD_DIR [EXTRA_DIR], SKIP_TESTS=1 for this script alone):
#  1. tools/compat_vs_driver over every fatbin container of the machine's CUDA binaries (the
#     toolkit's lib64; the Python environment's torch, nvidia/*, cupy, jax, triton), of
#     EXTRA_DIR (other toolchains' builds carried along, .xz allowed) and of the -gencode
#     matrix built here (tests/data/compat/make_matrix.sh), under CUDA_CACHE_DISABLE=1, then
#     again under CUDA_FORCE_PTX_JIT=1 and CUDA_DISABLE_PTX_JIT=1: "TOTAL: ... N differences".
#  2. `cudatool compat` on the Python environment and the extra files, as a user runs it.
#  3. Speed, on 2 CPUs (taskset) with a warm page cache: `cudatool compat` over every shared
#     library of the Python environment against `cuobjdump --list-elf --list-ptx` file by
#     file (bench/compat.sh does the timing).
# MODES="force" runs only those of the three modes (default: all); MODE_SECONDS limits each
# (default 90); JIT_SAMPLE loads at most that many JIT containers a file, MAX_JIT_PTX skips
# larger PTX (CUDA_FORCE_PTX_JIT makes every container with PTX a JIT load). Logs go to $OUT (compat_vs_driver.*.log, compat.txt, compat.json, bench.txt).
set -uo pipefail
build=${1:-/tmp/gpu-build}
extra=${2:-}
out=${OUT:-/tmp}
here=$(cd "$(dirname "$0")/.." && pwd)
tool=$build/compat_vs_driver
ct=$build/apps/cudatool/cudatool
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvidia-smi -L
files=()
while IFS= read -r f; do files+=("$f"); done < <(find "$cuda/lib64/" -maxdepth 1 -type f -name 'lib*.so*' | sort)
site=$(python3 -c 'import torch, os; print(os.path.dirname(os.path.dirname(torch.__file__)))' 2>/dev/null)
echo "site-packages: $site"
for pkg in torch nvidia cupy cupy_backends jaxlib jax_plugins triton; do
  [ -d "$site/$pkg" ] || continue
  while IFS= read -r f; do files+=("$f"); done < <(find "$site/$pkg" -type f \( -name '*.so' -o -name '*.so.*' -o -name '*.cubin' -o -name '*.fatbin' \) -size +16k | sort)
done
if [ -n "$extra" ] && [ -d "$extra" ]; then
  for f in "$extra"/*; do
    case "$f" in
      *.xz) xz -dc "$f" > "$work/$(basename "${f%.xz}")" && files+=("$work/$(basename "${f%.xz}")") ;;
      *) files+=("$f") ;;
    esac
  done
fi
bash "$here/tests/data/compat/make_matrix.sh" "$(command -v nvcc)" "$work/matrix" >/dev/null
matrix=("$work"/matrix/*.fatbin)
# The same file reached twice is compared once.
declare -A seen
unique=()
for f in "${files[@]}"; do
  key=$(stat -L -c '%s' "$f" 2>/dev/null)-$(head -c 65536 "$f" | md5sum | cut -c1-16)
  [ -n "${seen[$key]:-}" ] && continue
  seen[$key]=1
  unique+=("$f")
done
echo "${#unique[@]} files, ${#matrix[@]} matrix fatbins"
rc=0
for mode in ${MODES:-normal force disable}; do
  env=(CUDA_CACHE_DISABLE=1)
  [ $mode = force ] && env+=(CUDA_FORCE_PTX_JIT=1)
  [ $mode = disable ] && env+=(CUDA_DISABLE_PTX_JIT=1)
  log=$out/compat_vs_driver.$mode.log
  echo "== $mode: ${env[*]}"
  env "${env[@]}" timeout "${MODE_SECONDS:-90}" "$tool" --max-jit-ptx "${MAX_JIT_PTX:-2000000}" \
    --jit-sample "${JIT_SAMPLE:-1000000000}" "${matrix[@]}" "${unique[@]}" > "$log" 2>&1
  r=$?
  grep -E "^DIFFERENCE" "$log" | head -15
  grep -E "matrix/" "$log" | sed 's|.*/matrix/||' | head -40 | tr '\n' ';' | head -c 3000; echo
  grep -E "^TOTAL|^device" "$log"
  [ $r -ne 0 ] && rc=1
done
[ "${SKIP_BENCH:-0}" = 1 ] && exit $rc  # the comparison alone
echo "== compat on the Python environment"
"$ct" compat --python > "$out/compat.txt" 2>&1; echo "exit $?"
grep -v "^native" "$out/compat.txt" | head -30
"$ct" compat --python --json > "$out/compat.json" 2>/dev/null
[ -n "$extra" ] && "$ct" compat "$work"/*.fatbin 2>&1 | head -10
CUDA_FORCE_PTX_JIT=1 "$ct" compat --python 2>&1 | grep -E "torchvision|files with" | head -5
RUNS=${BENCH_RUNS:-3} bash "$here/bench/compat.sh" "$ct" "$site" 2>&1 | tee "$out/bench.txt"
exit $rc
