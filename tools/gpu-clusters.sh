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
# occupancy --device --cluster (the driver, through a stand-in kernel) against the offline
# answer (--arch: the architecture's part's measured GPCs), every size 1..16, over launches
# of 1 to 32 blocks per SM.
CT=$ct python3 - <<'PY' || rc=1
import json, os, subprocess
ct = os.environ["CT"]
launches = [(256, 8, "0"), (1024, 8, "0"), (32, 0, "0"), (64, 0, "0"), (128, 64, "0"), (256, 37, "10K"),
            (64, 32, "100K"), (512, 128, "0"), (96, 40, "20K"), (768, 16, "0"), (32, 16, "30K"),
            (128, 0, "200K"), (160, 24, "7K"), (384, 48, "0"), (32, 0, "12K")]
compared = differences = 0
for threads, regs, smem in launches:
    base = ["occupancy", "--threads", str(threads), "--regs", str(regs), "--smem", smem,
            "--cluster", "2", "--non-portable", "--json"]
    live = json.loads(subprocess.run([ct] + base + ["--device", "0"], capture_output=True, text=True, check=True).stdout)
    offline = json.loads(subprocess.run([ct] + base + ["--arch", "sm_90"], capture_output=True, text=True, check=True).stdout)
    d = live["cluster"]["driver"]
    if d is None:
        print("NO DRIVER ANSWER", threads, regs, smem, live["cluster"]["driver_error"]); differences += 1; continue
    want = [s["max_active_clusters"] for s in offline["cluster"]["sizes"]]
    compared += len(want) + 1
    bad = d["sizes"] != want or d["max_potential_cluster_size"] != offline["max_potential_cluster_size"]
    differences += bad
    print(("DIFFERENCE " if bad else "") + "threads %d regs %d smem %s: %d blocks/SM, driver %s (largest %d), offline %s (largest %d)" %
          (threads, regs, smem, live["tb_per_mp"], d["sizes"], d["max_potential_cluster_size"], want, offline["max_potential_cluster_size"]))
print("occupancy --device --cluster: %d launches, %d answers compared with --arch sm_90: %d differences" % (len(launches), compared, differences))
raise SystemExit(1 if differences else 0)
PY
"$ct" occupancy --device 0 --threads 256 --regs 8 --cluster 3
exit $rc
