#!/usr/bin/env bash
# Installs this build into a temporary prefix, then builds and runs a small program against
# it twice: through find_package(cudatool CONFIG) and through pkg-config. Also checks that
# the installed tree has the completions and schemas, and that nothing links a CUDA library.
# Usage: install_and_consume.sh BUILD_DIR SOURCE_DIR [CXX]
set -euo pipefail
build=$1 source=$2 cxx=${3:-c++}
work=$(mktemp -d "${TMPDIR:-/tmp}/cudatool-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

libdir=$(cd "$prefix" && ls -d lib*/pkgconfig | head -1 | xargs dirname)
for f in bin/cudatool include/cudatool/base/sha256.hpp "$libdir/libcudatool.a" \
    "$libdir/cmake/cudatool/cudatool-config.cmake" \
    "$libdir/cmake/cudatool/cudatool-config-version.cmake" "$libdir/pkgconfig/cudatool.pc" \
    share/bash-completion/completions/cudatool share/zsh/vendor-completions/_cudatool \
    share/fish/vendor_completions.d/cudatool.fish share/cudatool/schemas/devices.schema.json \
    share/cudatool/schemas/error.schema.json share/man/man1/cudatool.1; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f" >&2; exit 1; }
done

# find_package(cudatool CONFIG).
cmake -S "$source/tests/install/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" ||
  { cat "$work/configure.log"; exit 1; }
cmake --build "$work/cmake-build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
out=$("$work/cmake-build/consumer")
echo "find_package consumer: $out"
[ "$out" = $'tb_per_mp 6 limited_by regs\nsha256(abc) ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\nfilter 10' ]

# pkg-config cudatool.
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
version=$(pkg-config --modversion cudatool)
[ "cudatool $version" = "$("$prefix/bin/cudatool" --version)" ] ||
  { echo "cudatool.pc says version $version" >&2; exit 1; }
# shellcheck disable=SC2046
"$cxx" -std=c++20 "$source/tests/install/consumer/main.cpp" -o "$work/pc-consumer" \
  $(pkg-config --cflags --libs cudatool)
out=$("$work/pc-consumer")
echo "pkg-config consumer: $out"
[ "$out" = $'tb_per_mp 6 limited_by regs\nsha256(abc) ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\nfilter 10' ]

# The library and its consumers link no CUDA library (they are opened at run time).
for program in "$work/cmake-build/consumer" "$work/pc-consumer" "$prefix/bin/cudatool"; do
  if readelf -d "$program" | grep -E 'NEEDED.*(libcuda|libnvrtc|libnvidia-ml|libcudart)'; then
    echo "$program links a CUDA library" >&2
    exit 1
  fi
done
echo "install and consume: ok"
