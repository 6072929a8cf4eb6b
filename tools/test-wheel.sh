#!/usr/bin/env bash
# The wheel as a user gets it: `pip wheel .` (scikit-build-core, the same CMake project, a
# Release build; ccache makes the library's objects cheap the second time), then a fresh
# venv that installs only that wheel and, with no CUDA driver, runs `cudatool --version` and
# `python -c 'import cudatool'`, then the whole pytest suite against the installed package
# and its own `cudatool` command. Usage: bash tools/test-wheel.sh PYTHON BUILD_DIR
# (PYTHON: a python with nanobind and scikit-build-core, tools/python-env.sh; BUILD_DIR: the
# CMake build with the fake driver and the kernels test binaries).
set -euo pipefail
cd "$(dirname "$0")/.."
python=$1
build=$(cd "$2" && pwd)
out=$PWD/build-wheel
rm -rf "$out/dist" "$out/fresh"
start=$(date +%s)
# -Cbuild-dir: one build directory, reused (pyproject.toml names it) so that a second run is
# incremental.
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$python" -m pip wheel -q --no-build-isolation --no-deps \
  --disable-pip-version-check -w "$out/dist" .
echo "test-wheel: the wheel took $(( $(date +%s) - start )) s to build: $(ls "$out/dist")"
python3 -m venv "$out/fresh"
"$out/fresh/bin/python" -m pip install -q --no-index --disable-pip-version-check "$out"/dist/cudatool-*.whl
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
  CUDATOOL_FAKE_LIBCUDA="$build/tests/libfakecuda.so" CUDATOOL_KERNELS_DATA="$build/tests/kernels_data" \
  "$out/fresh/bin/python" -m pytest -q -p no:cacheprovider "$OLDPWD/tests/python")
