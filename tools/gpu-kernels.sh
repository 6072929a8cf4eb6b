#!/usr/bin/env bash
# `cudatool kernels` against the driver on a GPU machine, after a build (bash
# .deps/on-device.sh -- bash tools/gpu-kernels.sh BUILD_DIR [EXTRA_DIR], SKIP_TESTS=1 for this
# script alone): tools/kernels_vs_driver over every CUDA binary of the machine — every
# library of the toolkit, every shared library of the Python environment's torch, nvidia/*
# (cuDNN, NCCL, cuSPARSELt, cuBLAS...), CuPy and JAX — over the files of EXTRA_DIR (other
# toolchains' builds carried along, e.g. CUDA 11/12 wheels' libraries, .xz allowed), and
# over a -rdc shared library and executable built here with nvcc. Prints a line per file
# and "TOTAL: ... N differences"; exit 1 on any difference. Then the offline command's own
# figures on the toolkit's largest library.
set -uo pipefail
build=${1:-/tmp/gpu-build}
extra=${2:-}
tool=$build/kernels_vs_driver
ct=$build/apps/cudatool/cudatool
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvidia-smi -L
files=()
while IFS= read -r f; do files+=("$f"); done < <(find "$cuda/lib64/" -maxdepth 1 -type f -name 'lib*.so*' | sort)
for pkg in torch nvidia cupy cupy_backends jaxlib jax_plugins; do
  dir=$(python3 -c "import importlib.util as u, os; s = u.find_spec('$pkg'); print(os.path.dirname(s.origin) if s and s.origin else (list(s.submodule_search_locations)[0] if s else ''))" 2>/dev/null)
  [ -n "$dir" ] && [ -d "$dir" ] || continue
  echo "python package $pkg: $dir"
  while IFS= read -r f; do files+=("$f"); done < <(find "$dir" -type f \( -name '*.so' -o -name '*.so.*' \) -size +64k | sort)
done
if [ -n "$extra" ] && [ -d "$extra" ]; then
  for f in "$extra"/*; do
    case "$f" in
      *.xz) xz -dc "$f" > "$work/$(basename "${f%.xz}")" && files+=("$work/$(basename "${f%.xz}")") ;;
      *) files+=("$f") ;;
    esac
  done
fi
# Relocatable device code linked by nvlink: the test suite's -dc sources (tests/data/kernels:
# static, dynamic and no shared memory, recursion, a static kernel, a device-side launch)
# as a shared library and an executable.
data=$(cd "$(dirname "$0")/../tests/data/kernels" && pwd)
(cd "$work" && nvcc -arch=sm_90 -rdc=true -Xcompiler -fPIC -shared "$data/rdc.cu" "$data/launcher.cu" -o librdc.so 2>/dev/null &&
  nvcc -arch=sm_90a -rdc=true "$data/rdc.cu" "$data/launcher.cu" -o rdc_exe 2>/dev/null) && files+=("$work/librdc.so" "$work/rdc_exe")
# The same file reached twice (links, copies in several packages) is compared once.
declare -A seen
unique=()
for f in "${files[@]}"; do
  key=$(stat -L -c '%s' "$f" 2>/dev/null)-$(head -c 65536 "$f" | md5sum | cut -c1-16)
  [ -n "${seen[$key]:-}" ] && continue
  seen[$key]=1
  unique+=("$f")
done
echo "${#unique[@]} files"
"$tool" "${unique[@]}" 2>&1 | tee "${OUT:-/tmp}/kernels_vs_driver.log" | grep -v ' 0 images, 0 kernels, 0 attributes and 0 occupancy queries compared: 0 differences (0 through their enumerated handle, 0 the driver cannot load; 0 relocatable, 0 refused by the driver, 0 unreadable images)$'
rc=${PIPESTATUS[0]}
lib=$cuda/lib64
for f in libcublasLt.so.13 libcusparse.so.12; do
  [ -f "$lib/$f" ] || continue
  /usr/bin/time -f "$f: %e s wall, %U s user, %S s sys, %M KB peak RSS" "$ct" kernels --json "$lib/$f" >/dev/null
done
exit $rc
