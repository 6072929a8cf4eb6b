#!/usr/bin/env bash
# Issue 22 (items 1, 2, 5, 6, 7) on the GPU host (Ubuntu 24.04), after a build:
#   bash .deps/on-device.sh -- bash tools/gpu-ecosystem-packaging.sh /tmp/gpu-build
# The install test and the package test of that build (the consumer linked with CMake and
# pkg-config, every public area, devices through the real driver too), a Release build's
# packages (hardening, multiarch, copyright) installed with dpkg -i and removed again, the
# CSV output against nvidia-smi's, and completion in tmux where tmux and the shells are.
set -uo pipefail
build=${1:-/tmp/gpu-build}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
ct=$build/apps/cudatool/cudatool
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
cd "$source_dir" || exit 2
run head -2 /etc/os-release
run ctest --test-dir "$build" --output-on-failure -R 'install_and_consume|package_deb|completion_tmux|CliOutput'
# The CSV beside nvidia-smi's: names, PCI bus ids and UUIDs must agree row by row.
run "$ct" devices --format csv
run nvidia-smi --query-gpu=index,name,pci.bus_id,uuid --format=csv
run "$ct" attrs --format csv,noheader multiprocessor_count max_threads_per_block
run "$ct" --version
# The Release build, packaged: hardening, multiarch, copyright, summaries.
release=/tmp/gpu-build-release
run cmake -S . -B "$release" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDATOOL_BUILD_TESTS=OFF \
  -DCUDATOOL_BUILD_BENCHMARKS=OFF -DCMAKE_PREFIX_PATH="$PWD/.deps/root/usr"
run cmake --build "$release" -j"$(nproc)"
run bash tests/install/package_deb.sh "$release"
# Installed and removed with dpkg (root only; apt is not reachable there, so the
# dependencies the packages name must already be installed or dpkg says which are not).
if [ "$(id -u)" -eq 0 ]; then
  debs=$(mktemp -d)
  (cd "$debs" && cpack --config "$release/CPackConfig.cmake" -G DEB >/dev/null)
  run dpkg -i "$debs"/cudatool_*.deb
  run cudatool --version
  run man -w cudatool
  run ls -l /usr/share/doc/cudatool/copyright
  run dpkg -r cudatool
  run test ! -e /usr/bin/cudatool
  rm -rf "$debs"
fi
