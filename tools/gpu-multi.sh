#!/usr/bin/env bash
# The multi-device checks, on a machine with two or more GPUs, after
# `bash .deps/on-device.sh` built into /tmp/gpu-build and ran ctest:
#   bash .deps/on-device.sh -- bash tools/gpu-multi.sh
set -uo pipefail
ct=/tmp/gpu-build/apps/cudatool/cudatool
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
run nvidia-smi -L
run nvidia-smi --query-gpu=index,pci.bus_id,uuid --format=csv,noheader
run "$ct" devices
run "$ct" devices --json
run "$ct" devices --min-count 2 --min-cc 9.0
second=$("$ct" devices --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["devices"][1]["uuid"])')
run "$ct" attrs --device "$second" --json multiprocessor_count pci_bus_id
run env CUDA_VISIBLE_DEVICES=1 "$ct" devices
run env CUDA_VISIBLE_DEVICES=1,0 "$ct" devices
run env CUDA_DEVICE=1 "$ct" attrs pci_bus_id
run "$ct" occupancy --device 1 --threads 256 --regs 32 --smem 0 --json
run "$ct" compile tests/data/compile/saxpy.cu --no-extern-c --load --device 1 --no-cache
run "$ct" bench-pool --backend device --device 1 --size 4K --duration 0.5 --no-progress
