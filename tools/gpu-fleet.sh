#!/usr/bin/env bash
# Issue 38 on a GPU machine, after `bash .deps/on-device.sh` built into /tmp/gpu-build:
#   bash .deps/on-device.sh -- bash tools/gpu-fleet.sh
# What the XID reader could read on this host (its source, lines, XIDs per GPU), each GPU's
# and the node's remediation, the NFD feature file, the JSON against its schema, and the
# whole check's timings (goal: <= 1.0 s on one GPU, <= 1.5 s on two; bench/check.sh).
set -uo pipefail
ct=${CUDATOOL:-/tmp/gpu-build/apps/cudatool/cudatool}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/gpu-out}; mkdir -p "$out"
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
run nvidia-smi -L
echo "kernel.dmesg_restrict=$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null); uid $(id -u)"
run "$ct" check --only identity,xid
echo "\$ $ct check --json"; "$ct" check --json > "$out/fleet-check.json"; echo "[exit $?]"
python3 - "$out/fleet-check.json" "$here/share/schemas/check.schema.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
log = doc.get("kernel_log", {})
print("kernel log:", json.dumps({k: log.get(k) for k in ("readable", "source", "note")}))
for c in doc["node_checks"]:
    if c["check"] == "xid" or c["name"] == "nvml_devices":
        print(f"  node {c['name']}: {c['verdict']} {c['remediation']}: {c['reason']}")
for d in doc["devices"]:
    print(f"  device {d['ordinal']} {d['pci_bus_id']}: {d['verdict']} {d['remediation']}, xids {d.get('xids')}")
print("remediation:", doc["remediation"], "|", doc["remediation_reason"], "| duration_s", doc["duration_s"])
try:
    import jsonschema
    jsonschema.validate(doc, json.load(open(sys.argv[2]))); print("fleet-check.json: valid against check.schema.json")
except ImportError:
    print("jsonschema not installed: schema not validated")
PY
run "$ct" check --only identity,health,xid --format nfd
run "$ct" check --format prometheus --only identity,xid
echo "--- the same as a user without CAP_SYSLOG (journalctl, else skipped with the reason)"
if id nobody >/dev/null 2>&1; then
  run setpriv --reuid=nobody --regid=nogroup --clear-groups "$ct" check --only identity,xid
fi
echo "--- timings (bench/check.sh)"
bash "$here/bench/check.sh" "$ct" 10
