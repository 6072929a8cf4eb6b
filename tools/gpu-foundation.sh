#!/usr/bin/env bash
# The foundation's checks on a GPU machine, after a build (bash .deps/on-device.sh -- bash
# tools/gpu-foundation.sh BUILD_DIR): real output of devices and attrs, the error paths a
# GPU machine can show, and the whole-process benchmark against the bare-driver floor.
set -uo pipefail
build=${1:-/tmp/gpu-build}
ct=$build/apps/cudatool/cudatool
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
run nvidia-smi -L
run nvidia-smi --query-gpu=index,pci.bus_id,uuid,memory.total,memory.free --format=csv
run "$ct" devices
run "$ct" devices --memory-usage
run "$ct" devices --json --memory-usage
run "$ct" attrs --device 0 multiprocessor_count max_shared_memory_per_block_optin warp_size compute_capability_major
"$ct" attrs | wc -l
run "$ct" devices --min-count 2
run "$ct" devices --min-cc 9.0 --min-memory 70GiB
run env CUDA_VISIBLE_DEVICES= "$ct" devices
run env CUDA_VISIBLE_DEVICES=7 "$ct" devices
run "$ct" attrs --device 99 warp_size
run env CUDA_DEVICE=abc "$ct" attrs warp_size
run env CUDATOOL_LIBCUDA=/usr/local/cuda/lib64/stubs/libcuda.so "$ct" devices
ldd "$ct" | grep -E "cuda|nvrtc" || echo "ldd: no libcuda, no libnvrtc"
bash "$(dirname "$0")/../bench/devices.sh" "$ct" "${ROUNDS:-20}"
