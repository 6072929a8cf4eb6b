#!/usr/bin/env bash
# Cluster occupancy against the driver on a GPU machine, after a build (bash
# .deps/on-device.sh -- bash tools/gpu-clusters.sh BUILD_DIR, SKIP_TESTS=1 for this script
# alone): records this GPU's own answers with tools/clusters_vs_driver/record_clusters.cu
# (cuOccupancyMaxActiveClusters, cuOccupancyMaxPotentialClusterSize and the per-SM figure over
# 13 kernels, block sizes 32-1024, dynamic shared memory up to the opt-in limit, cluster sizes
# 1-16 and shapes, and where co-resident clusters ran), writes the record to $OUT, and compares
# the offline answer with it and with the records kept in tests/data/clusters. Prints a line
# per record and "TOTAL: ... N differences"; exit 1 on any difference. Then `occupancy
# --cluster` on the device and offline, side by side.
set -uo pipefail
build=${1:-/tmp/gpu-build}
out=${OUT:-/tmp}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvidia-smi -L
nvcc -O2 -arch=sm_90a -o "$work/record_clusters" "$here/tools/clusters_vs_driver/record_clusters.cu" -lcuda 2>&1 | grep -v -e Remark -e '^$'
record="$out/record-$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr ' /' '__').json"
"$work/record_clusters" > "$record" || { echo "record_clusters failed"; exit 1; }
"$build/clusters_vs_driver" "$record" "$here"/tests/data/clusters/*.json
rc=$?
ct=$build/apps/cudatool/cudatool
for c in 1 2 3 16; do
  "$ct" occupancy --arch sm_90 --threads 256 --regs 8 --cluster $c --non-portable --json | python3 -c "import json,sys; d=json.load(sys.stdin); print('offline sm_90 cluster $c:', d['max_active_clusters'], d['max_potential_cluster_size'])"
done
"$ct" occupancy --device 0 --threads 256 --regs 8 --cluster 3
exit $rc
