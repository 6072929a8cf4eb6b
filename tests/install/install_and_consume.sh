#!/usr/bin/env bash
# Installs this build into a temporary prefix, then builds and runs a small program that
# calls every public area against it twice, at the compiler's default C++ standard: through
# find_package(cudatool CONFIG) and through pkg-config. Also checks that
# the installed tree has the completions and schemas, and that nothing links a CUDA library.
# Usage: install_and_consume.sh BUILD_DIR SOURCE_DIR [CXX]
set -euo pipefail
build=$1 source=$2 cxx=${3:-c++}
work=$(mktemp -d "${TMPDIR:-/tmp}/cudatool-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

libdir=$(cd "$prefix" && find lib* -name cudatool.pc -path '*/pkgconfig/*' | head -1 | xargs dirname |
  xargs dirname)
# On Debian the library goes to the multiarch directory, as Debian's own libraries do.
if [ -e /etc/debian_version ] && arch=$(gcc -print-multiarch 2>/dev/null) && [ -n "$arch" ]; then
  [ "$libdir" = "lib/$arch" ] || { echo "library directory $libdir, not lib/$arch" >&2; exit 1; }
fi
for f in bin/cudatool include/cudatool/base/sha256.hpp "$libdir/libcudatool.a" \
    "$libdir/cmake/cudatool/cudatool-config.cmake" \
    "$libdir/cmake/cudatool/cudatool-config-version.cmake" "$libdir/pkgconfig/cudatool.pc" \
    share/bash-completion/completions/cudatool share/zsh/vendor-completions/_cudatool \
    share/fish/vendor_completions.d/cudatool.fish share/cudatool/schemas/devices.schema.json \
    share/cudatool/schemas/error.schema.json share/man/man1/cudatool.1.gz \
    share/doc/cudatool/copyright share/doc/cudatool/NOTICE share/doc/cudatool-dev/copyright; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done

# What the consumer must print: occupancy, SHA-256, the RE2 filter, a memory pool, a scan of
# the build's nvcc-built objects (zstd and LZ4 entries) where nvcc built them (the counts
# from the installed tool), and the fake driver's two devices.
objects=()
for f in "$build/tests/kernels_data/zstd.o" "$build/tests/kernels_data/lz4.o"; do
  [ -f "$f" ] && objects+=("$f")
done
expected=$'tb_per_mp 6 limited_by regs\nsha256(abc) ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\nfilter 10\npool held 1'
if [ ${#objects[@]} -gt 0 ]; then
  counts=$("$prefix/bin/cudatool" kernels --json "${objects[@]}" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("scan images %d kernels %d compression %s" % (len(d["images"]), len(d["kernels"]),
      " ".join(sorted({i["compression"] for i in d["images"]}))))')
  expected+=$'\n'"$counts"
else
  echo "no nvcc-built objects in $build/tests/kernels_data: scan_binaries linked, not run"
fi
expected+=$'\ndevices 2 sm_90 sm_80'
# The fake driver stands in for libcuda.so.1; NVRTC is used where it is found.
export CUDATOOL_LIBCUDA=$build/tests/libfakecuda.so
[ -f "$CUDATOOL_LIBCUDA" ] || { echo "no fake driver at $CUDATOOL_LIBCUDA" >&2; exit 1; }
check_output() {  # NAME PROGRAM
  local out
  out=$("$2" "${objects[@]}")
  echo "$1 consumer:"; echo "$out"
  [ "$out" = "$expected" ] || { echo "$1 consumer: expected"; echo "$expected"; exit 1; } >&2
}

# find_package(cudatool CONFIG), at the compiler's default standard (no CMAKE_CXX_STANDARD:
# cudatool::cudatool requires C++20 itself).
# The build's own CMAKE_PREFIX_PATH follows (a dependency tree unpacked elsewhere, as on the
# GPU host: the consumer must find the zstd, LZ4, RE2 and nlohmann/json the library was
# built with).
build_prefix_path=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$source/tests/install/consumer" -B "$work/cmake-build" \
  -DCMAKE_PREFIX_PATH="$prefix${build_prefix_path:+;$build_prefix_path}" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
check_output find_package "$work/cmake-build/consumer"
# The targets file names no path of the build machine: its dependencies are found anew.
if grep -E '/usr/lib/|\.so"|\.a"' "$prefix/$libdir/cmake/cudatool/cudatool-targets.cmake"; then
  echo "cudatool-targets.cmake names a library by its path" >&2
  exit 1
fi

# pkg-config cudatool, at the compiler's default standard (no -std: the .pc gives it).
# The build's CMAKE_PREFIX_PATH, as for find_package above: the .pc files of a dependency
# tree unpacked elsewhere (RE2's re2.pc on the GPU host) are under its prefixes.
# Their .pc files name the prefix they were built for (/usr), so the linker is also told
# their library directories (LIBRARY_PATH, as -L would).
dependency_pc=""
IFS=';' read -r -a build_prefixes <<<"$build_prefix_path"
for p in "${build_prefixes[@]}"; do
  for d in "$p/lib/pkgconfig" "$p/$libdir/pkgconfig" "$p/share/pkgconfig"; do
    [ -d "$d" ] && dependency_pc="$dependency_pc:$d"
  done
  for d in "$p/lib" "$p/$libdir"; do
    [ -d "$d" ] && export LIBRARY_PATH="$d${LIBRARY_PATH:+:$LIBRARY_PATH}"
  done
done
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig$dependency_pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
version=$(pkg-config --modversion cudatool)
grep -qx 'License: Apache-2.0' "$prefix/$libdir/pkgconfig/cudatool.pc"
[ "cudatool $version" = "$("$prefix/bin/cudatool" --version | head -1)" ] ||
  { echo "cudatool.pc says version $version" >&2; exit 1; }
# shellcheck disable=SC2046
"$cxx" "$source/tests/install/consumer/main.cpp" -o "$work/pc-consumer" \
  $(pkg-config --cflags --libs cudatool)
check_output pkg-config "$work/pc-consumer"

# A consumer built against another nlohmann/json than the library's: JSON_DIAGNOSTICS=1
# changes nlohmann's ABI namespace (json_abi_diag_v3_11_x), as another release does
# (json_abi_v3_11_3 against v3_11_2: Ubuntu 24.04's consumers failed to link the library's
# to_json). The library's JSON is the app's now (apps/cudatool/*_json.hpp), so this links.
# shellcheck disable=SC2046
"$cxx" -DJSON_DIAGNOSTICS=1 "$source/tests/install/consumer/main.cpp" -o "$work/abi-consumer" \
  $(pkg-config --cflags --libs cudatool)
check_output other-nlohmann-abi "$work/abi-consumer"

# The public headers that still include nlohmann/json (none) or <cuda.h> (issue 21: none should):
# no other header may start to.
still_json=""
still_cuda="cudatool/compile/module.hpp cudatool/device/attributes.hpp cudatool/device/context.hpp \
cudatool/device/device.hpp cudatool/device/device_cache.hpp cudatool/driver/driver.hpp \
cudatool/memory/allocators.hpp"
including() {  # PATTERN
  (cd "$prefix/include" && grep -rlE "$1" cudatool | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
}
[ "$(including '#include <nlohmann/')" = "$still_json" ] ||
  { echo "public headers including nlohmann/json: $(including '#include <nlohmann/')" >&2; exit 1; }
[ "$(including '#include <cuda\.h>')" = "$(echo $still_cuda)" ] ||
  { echo "public headers including <cuda.h>: $(including '#include <cuda\.h>')" >&2; exit 1; }

# The library and its consumers link no CUDA library (they are opened at run time).
for program in "$work/cmake-build/consumer" "$work/pc-consumer" "$prefix/bin/cudatool"; do
  if readelf -d "$program" | grep -E 'NEEDED.*(libcuda|libnvrtc|libnvidia-ml|libcudart)'; then
    echo "$program links a CUDA library" >&2
    exit 1
  fi
done
echo "install and consume: ok"
