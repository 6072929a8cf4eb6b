#!/usr/bin/env bash
# `cudatool check` on a GPU machine, after `bash .deps/on-device.sh` built into
# /tmp/gpu-build (and ran ctest):  bash .deps/on-device.sh -- bash tools/gpu-check.sh
# Shows every check passing on a healthy machine, each fail path (a threshold the hardware
# cannot meet, the compute fault injection), JSON and Prometheus output validated, and the
# whole-process timings (goal: <= 1.0 s on one H100, <= 1.5 s on two H200s).
set -uo pipefail
ct=${CUDATOOL:-/tmp/gpu-build/apps/cudatool/cudatool}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/gpu-out}; mkdir -p "$out"
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
run nvidia-smi -L
run nvidia-smi --query-gpu=index,pci.bus_id,pcie.link.gen.max,pcie.link.width.max,ecc.mode.current,clocks_event_reasons.active --format=csv
run "$ct" check
echo "\$ $ct check --json"; "$ct" check --json > "$out/check.json"; echo "[exit $?]"; cat "$out/check.json"
python3 - "$out/check.json" "$here/share/schemas/check.schema.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); doc.setdefault("schema_version", 1)
try:
    import jsonschema
    jsonschema.validate(doc, json.load(open(sys.argv[2]))); print("check.json: valid against check.schema.json")
except ImportError:
    print("jsonschema not installed: schema not validated")
PY
run "$ct" check --format prometheus
echo "--- fail paths"
run "$ct" check --only hostlink --min-h2d-gbps 10000
run env CUDATOOL_CHECK_INJECT_FAULT=compute "$ct" check --only compute
run env CUDATOOL_CHECK_INJECT_FAULT=compute "$ct" check --only compute --json
run "$ct" check --only identity --expect-count 2 --min-cc 9.0
run "$ct" check --only identity --expect-name A100
run env CUDATOOL_NO_NVML=1 "$ct" check --only health,identity
run "$ct" check --device 99
run "$ct" check --only health
run "$ct" check --only peer
echo "--- timings (whole process, s)"
for i in 1 2 3 4 5; do /usr/bin/time -f "check %e s (exit %x)" "$ct" check >/dev/null; done
for i in 1 2 3; do /usr/bin/time -f "check --only health %e s" "$ct" check --only health >/dev/null; done
for i in 1 2 3; do /usr/bin/time -f "devices %e s" "$ct" devices >/dev/null; done
bash "$here/bench/check.sh" "$ct" "${ROUNDS:-10}"
