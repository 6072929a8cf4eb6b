#!/usr/bin/env bash
# Installs this build into a temporary prefix, then builds and runs a small program that
# calls every public area against it twice, at the compiler's default C++ standard: through
# find_package(cudatool CONFIG) and through pkg-config. Also checks that
# the installed tree has the completions and schemas, that its headers are exactly the public
# ones (lib/include), and that nothing links a CUDA library.
# The library's package names neither nlohmann/json nor the CUDA toolkit (no public header
# includes them): one consumer uses an nlohmann/json of another ABI than the library's, and,
# given OTHER_NLOHMANN_INCLUDE (headers of another nlohmann/json version), consumers through
# both ways use that version.
# Usage: install_and_consume.sh BUILD_DIR SOURCE_DIR [CXX [OTHER_NLOHMANN_INCLUDE]]
set -euo pipefail
build=$1 source=$2 cxx=${3:-c++} other_nlohmann=${4:-}
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
# The installed headers are exactly the public ones, lib/include/cudatool; none of the
# library's internal headers (lib/src/<folder>/*.hpp) is installed, and no public header has an
# internal one's name.
installed=$(cd "$prefix/include" && find cudatool -type f | LC_ALL=C sort)
public=$(cd "$source/lib/include" && find cudatool -type f | LC_ALL=C sort)
[ "$installed" = "$public" ] || {
  echo "installed headers (>) differ from lib/include (<):"
  diff <(echo "$public") <(echo "$installed")
  exit 1
} >&2
internal=$(cd "$source/lib/src" && find . -name '*.hpp' | sed 's#^\./#cudatool/#' | LC_ALL=C sort)
both=$(LC_ALL=C comm -12 <(echo "$installed") <(echo "$internal"))
[ -z "$both" ] || { echo "installed, and internal in lib/src too: $both" >&2; exit 1; }

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
check_output() {  # NAME PROGRAM [NLOHMANN_VERSION: the consumer's own, built in]
  local out want=$expected
  [ -z "${3:-}" ] || want+=$'\n''json {"devices":2,"limited_by":"regs","tb_per_mp":6} nlohmann '"$3"
  out=$("$2" "${objects[@]}")
  echo "$1 consumer:"; echo "$out"
  [ "$out" = "$want" ] || { echo "$1 consumer: expected"; echo "$want"; exit 1; } >&2
}
# NLOHMANN_JSON_VERSION_MAJOR.MINOR.PATCH of the nlohmann/json headers in a directory.
nlohmann_version() {  # INCLUDE_DIR
  local macros=$1/nlohmann/detail/abi_macros.hpp
  [ -f "$macros" ] || macros=$1/nlohmann/json.hpp
  sed -n 's/^#define NLOHMANN_JSON_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$macros" |
    paste -sd.
}
# The nlohmann/json the library was built with (its CMake package's prefix).
library_nlohmann_dir=$(sed -n 's/^nlohmann_json_DIR:PATH=//p' "$build/CMakeCache.txt")
library_nlohmann_include=$(cd "$library_nlohmann_dir/../../../include" && pwd)
library_nlohmann=$(nlohmann_version "$library_nlohmann_include")
[ -n "$library_nlohmann" ] || { echo "no nlohmann/json in $library_nlohmann_include" >&2; exit 1; }
other_version=""
if [ -n "$other_nlohmann" ]; then
  other_version=$(nlohmann_version "$other_nlohmann")
  [ -n "$other_version" ] && [ "$other_version" != "$library_nlohmann" ] ||
    { echo "$other_nlohmann: nlohmann/json '$other_version', not another version than the library's $library_nlohmann" >&2; exit 1; }
  echo "the library: nlohmann/json $library_nlohmann; consumers: $other_version"
else
  echo "no second nlohmann/json version given (tools/python-env.sh puts one in build-venv):" \
    "only the consumer of another nlohmann ABI is built"
fi

# find_package(cudatool CONFIG), at the compiler's default standard (no CMAKE_CXX_STANDARD:
# cudatool::cudatool requires C++20 itself).
# The build's own CMAKE_PREFIX_PATH follows (a dependency tree unpacked elsewhere, as on the
# GPU host: the consumer must find the zstd, LZ4, RE2 and nlohmann/json the library was
# built with).
build_prefix_path=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$build/CMakeCache.txt")
# With another nlohmann/json version, the consumer uses that one.
cmake -S "$source/tests/install/consumer" -B "$work/cmake-build" \
  -DCMAKE_PREFIX_PATH="$prefix${build_prefix_path:+;$build_prefix_path}" \
  -DCONSUMER_NLOHMANN_INCLUDE="$other_nlohmann" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
check_output find_package "$work/cmake-build/consumer" "$other_version"
# The package asks for neither nlohmann/json nor the CUDA toolkit (its comments may name them).
if cat "$prefix/$libdir/cmake/cudatool/"*.cmake | grep -v '^ *#' |
    grep -Eio 'nlohmann[a-z_]*|CUDA::[a-z_]*|CUDAToolkit'; then
  echo "the cudatool package names nlohmann/json or the CUDA toolkit" >&2
  exit 1
fi
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
if grep -v '^#' "$prefix/$libdir/pkgconfig/cudatool.pc" | grep -Eio 'nlohmann[a-z_]*|cuda[a-z_]*include[a-z]*'; then
  echo "cudatool.pc names nlohmann/json or the CUDA toolkit" >&2
  exit 1
fi
# The compiler's list of the files it opened (-H): no CUDA toolkit header (this machine's
# default include path may well reach one, /usr/local/include on some CUDA images).
# shellcheck disable=SC2046
"$cxx" -H "$source/tests/install/consumer/main.cpp" -o "$work/pc-consumer" \
  $(pkg-config --cflags --libs cudatool) 2>"$work/pc-consumer.trace" ||
  { cat "$work/pc-consumer.trace"; exit 1; }
if grep -E '^\.+ .*/(cuda|cuda_runtime|cuda_occupancy|nvrtc|nvml)\.h$' "$work/pc-consumer.trace"; then
  echo "the consumer opened a CUDA toolkit header through cudatool's" >&2
  exit 1
fi
check_output pkg-config "$work/pc-consumer"
if [ -n "$other_nlohmann" ]; then
  # shellcheck disable=SC2046
  "$cxx" -I"$other_nlohmann" -DCUDATOOL_CONSUMER_JSON "$source/tests/install/consumer/main.cpp" \
    -o "$work/other-nlohmann-consumer" $(pkg-config --cflags --libs cudatool)
  check_output pkg-config-other-nlohmann "$work/other-nlohmann-consumer" "$other_version"
fi

# A consumer using the library's own nlohmann/json headers in another ABI: JSON_DIAGNOSTICS=1
# changes nlohmann's ABI namespace (json_abi_diag_v3_11_x), as another release does
# (json_abi_v3_11_3 against v3_11_2: Ubuntu 24.04's consumers failed to link the library's
# to_json while public headers included nlohmann/json). Nothing of cudatool's names an
# nlohmann type, so this links.
# shellcheck disable=SC2046
"$cxx" -I"$library_nlohmann_include" -DJSON_DIAGNOSTICS=1 -DCUDATOOL_CONSUMER_JSON \
  "$source/tests/install/consumer/main.cpp" -o "$work/abi-consumer" \
  $(pkg-config --cflags --libs cudatool)
check_output other-nlohmann-abi "$work/abi-consumer" "$library_nlohmann"

# No installed header includes nlohmann/json or a CUDA toolkit header (public_headers.sh
# checks each one alone, through everything it includes).
if (cd "$prefix/include" && grep -rnE '#include <(nlohmann/|cuda\.h|cuda_|nvrtc\.h|nvml\.h)' cudatool); then
  echo "installed headers include nlohmann/json or a CUDA toolkit header" >&2
  exit 1
fi

# The library and its consumers link no CUDA library (they are opened at run time).
for program in "$work/cmake-build/consumer" "$work/pc-consumer" "$prefix/bin/cudatool"; do
  if readelf -d "$program" | grep -E 'NEEDED.*(libcuda|libnvrtc|libnvidia-ml|libcudart)'; then
    echo "$program links a CUDA library" >&2
    exit 1
  fi
done
echo "install and consume: ok"
