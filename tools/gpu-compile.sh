#!/usr/bin/env bash
# `cudatool compile --load` over the compile corpus on a GPU machine, after a build
# (bash .deps/on-device.sh -- bash tools/gpu-compile.sh BUILD_DIR [ARCH]): every file is
# compiled with no flag but --arch (the engine chosen for it) and its module loaded; the
# offline figures must equal the driver's. Expected, per file:
#   loaded on device: all N kernels match the driver's attributes
# and a last line "gpu-compile: F files, K kernels, 0 mismatches, 0 failures".
# A file that needs relocatable device code (dynamic_parallelism.cu: device-side launches
# and an extern __device__ function) cannot be loaded unlinked; it is compiled and
# reported, not loaded, and says so.
set -uo pipefail
build=${1:-/tmp/gpu-build}
arch=${2:-sm_90}
ct=$build/apps/cudatool/cudatool
root=$(cd "$(dirname "$0")/.." && pwd)
export CUDATOOL_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$CUDATOOL_CACHE_DIR"' EXIT
files=0 kernels=0 mismatches=0 failures=0
for f in "$root"/tests/data/compile/real/*.cu "$root"/tests/data/compile/*.cu; do
  files=$((files + 1))
  extra=()
  case $(basename "$f") in
    maxrreg_spill.cu) extra=(--maxrregcount 32) ;;
  esac
  reason=$("$ct" compile "$f" --arch "$arch" "${extra[@]}" --json 2>/dev/null |
    sed -n 's/.*"engine_reason": *"\(.*\)",*$/\1/p' | head -1)
  if [[ $reason == *"-rdc"* ]]; then
    echo "\$ cudatool compile $(basename "$f") --arch $arch  (relocatable: not loaded)"
    "$ct" compile "$f" --arch "$arch" "${extra[@]}" || failures=$((failures + 1))
    continue
  fi
  echo "\$ cudatool compile $(basename "$f") --arch $arch ${extra[*]} --load"
  out=$("$ct" compile "$f" --arch "$arch" "${extra[@]}" --load 2>&1)
  status=$?
  echo "$out"
  echo "[exit $status]"
  case $status in
    0) n=$(sed -n 's/^loaded on device: all \([0-9]*\) kernels match.*/\1/p' <<<"$out")
       kernels=$((kernels + ${n:-0})) ;;
    8) mismatches=$((mismatches + $(grep -c '^MISMATCH' <<<"$out"))) ;;
    *) failures=$((failures + 1)) ;;
  esac
done
echo "gpu-compile: $files files, $kernels kernels, $mismatches mismatches, $failures failures"
[[ $mismatches -eq 0 && $failures -eq 0 ]]
