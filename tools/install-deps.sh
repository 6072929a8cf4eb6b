#!/usr/bin/env bash
# Installs cudatool's build and test dependencies from Debian's packages (clang-14 and
# its runtime libraries for the libFuzzer harnesses, tools/fuzz.sh; libzip's header, for
# `compat` to read wheels: the library itself is opened at run time). The CUDA
# toolkit (headers, cuda_occupancy.h, NVRTC) is expected at $CUDA_HOME or /usr/local/cuda.
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends \
  cmake ninja-build g++ make libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev \
  libbenchmark-dev libssl-dev pkg-config python3-jsonschema python3-prometheus-client zsh fish tmux dpkg-dev clang-14 libclang-rt-14-dev libzstd-dev liblz4-dev libre2-dev libzip-dev \
  python3-dev python3-venv python3-pip python3-yaml munge slurmctld slurmd slurm-client >/dev/null
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda.h" ]; then
  echo "install-deps.sh: the CUDA toolkit is not at $cuda (set CUDA_HOME): cudatool needs its headers" >&2
  exit 1
fi
if [ ! -x "$cuda/bin/nvcc" ] && ! command -v nvcc >/dev/null; then
  echo "install-deps.sh: no nvcc in $cuda/bin: it builds the kernels cudatool check embeds" >&2
  exit 1
fi
# cuobjdump, for the tests that compare `cudatool kernels` with it (they skip without it).
# NVIDIA's PyPI package; 13.0 is not published there, 13.2 reads CUDA 13.0's binaries.
if ! command -v cuobjdump >/dev/null && ! [ -x "$cuda/bin/cuobjdump" ] && command -v pip >/dev/null; then
  if pip install -q 'nvidia-cuda-cuobjdump==13.2.*' >/dev/null 2>&1; then
    # The wheel puts it under site-packages/nvidia/cu13/bin: link it onto PATH.
    bin=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "bin", "cuobjdump"))' 2>/dev/null || true)
    [ -n "$bin" ] && [ -x "$bin" ] && $sudo ln -sf "$bin" /usr/local/bin/cuobjdump
  fi
  command -v cuobjdump >/dev/null || echo "install-deps.sh: no cuobjdump (the cuobjdump comparisons will skip)" >&2
fi
# The Python module's build requirements and pytest, pinned, into build-venv/ (not in Debian
# 12: from PyPI; tools/python-env.sh).
bash "$(dirname "$0")/python-env.sh" >/dev/null
