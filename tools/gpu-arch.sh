#!/usr/bin/env bash
# What issue 21's architecture/occupancy work needs checked on a GPU machine, after a build
# (bash .deps/on-device.sh -- bash tools/gpu-arch.sh BUILD_DIR):
#   1. the tests that touch the code it changed, with the driver present: the occupancy
#      table against the driver, kernels_vs_driver (ScanOptions::arch now holds Arch), the
#      compile corpus against the driver, and the new consistency and architecture tests;
#   2. compile --load on tests/data/occupancy/kernel_kinds.cu (launch bounds, min-blocks,
#      __block_size__ reqntid, __cluster_dims__, a stack frame, shared memory) for the
#      device's architecture: the offline resources equal the driver's (exit 8 otherwise);
#   3. occupancy --kernel-from with --device against --arch of the device's row, for each of
#      those kernels at 128 threads: the live device and the table give the same object.
# Exit 1 on any failure.
set -uo pipefail
build=${1:-/tmp/gpu-build}
ct=$build/apps/cudatool/cudatool
src=$(cd "$(dirname "$0")/.." && pwd)
failed=0
nvidia-smi -L
ctest --test-dir "$build" --output-on-failure \
  -R 'OccupancyGpu|KernelsGpu|CompileGpu|CliKernelOccupancy|CliArchitecture|CliKernels|CliCompile|CliOccupancy' ||
  failed=1
sm=$("$ct" devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin)["devices"][0]; print("sm_" + d["compute_capability"].replace(".", ""))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$ct" compile "$src/tests/data/occupancy/kernel_kinds.cu" --arch "$sm" --no-cache --load \
  --threads 128 -o "$work/kinds.cubin" || { echo "compile --load: resources differ or failed"; failed=1; }
for k in bounded min_blocks required64 clustered spills tiled; do
  [ "$sm" \< sm_90 ] && { [ $k = required64 ] || [ $k = clustered ]; } && continue
  a=$("$ct" occupancy --kernel-from "$work/kinds.cubin" --kernel "^$k\$" --threads 128 --device 0 --json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print({k: d.get(k) for k in ("tb_per_mp","warps_per_mp","limited_by","error")})')
  b=$("$ct" occupancy --kernel-from "$work/kinds.cubin" --kernel "^$k\$" --threads 128 --arch "$sm" --json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print({k: d.get(k) for k in ("tb_per_mp","warps_per_mp","limited_by","error")})')
  echo "$k at 128: device $a, table $b"
  [ "$a" = "$b" ] || { echo "$k: the device and the table differ"; failed=1; }
done
exit $failed
