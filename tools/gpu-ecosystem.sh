#!/usr/bin/env bash
# Issue 14's checks on a GPU machine, after a build (bash .deps/on-device.sh -- bash
# tools/gpu-ecosystem.sh BUILD_DIR): the driver's version beside the CUDA version (compare
# with nvidia-smi's), from /proc and from NVML, the real --json documents of a GPU machine
# validated against share/schemas (devices with NVML's memory, attrs, compile --load), and
# the examples' text to refresh (README.md, docs/examples.md).
set -uo pipefail
build=${1:-/tmp/gpu-build}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
ct=$build/apps/cudatool/cudatool
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
run nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run head -1 /proc/driver/nvidia/version
run "$ct" devices                       # last line: driver: <nvidia-smi's version> (CUDA 13.0)
run "$ct" devices --memory-usage        # the version from NVML this time
run env CUDATOOL_NO_NVML=1 "$ct" devices --memory-usage
run "$ct" devices --min-count 2
"$ct" devices --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print("schema_version", d["schema_version"], "cuda_version", d["cuda_version"], "driver_version", d.get("driver_version"))'
# Real-GPU documents against the schemas.
python3 - "$ct" "$source_dir" <<'PY'
import json, subprocess, sys, tempfile
import jsonschema
ct, src = sys.argv[1], sys.argv[2]
cache = tempfile.mkdtemp()
cases = [("devices", ["devices", "--json", "--memory-usage"]),
         ("attrs", ["attrs", "--json"]),
         ("occupancy", ["occupancy", "--json", "--threads", "256", "--regs", "32"]),
         ("compile", ["compile", "--json", "--load", "--threads", "256", "--cache-dir", cache,
                      src + "/tests/data/compile/mixed.cu"]),
         ("bench-pool", ["bench-pool", "--json", "--backend", "device", "--iterations", "2000"]),
         ("error", ["attrs", "--json", "--device", "99", "warp_size"])]
bad = 0
for name, args in cases:
    schema = json.load(open(f"{src}/share/schemas/{name}.schema.json"))
    r = subprocess.run([ct] + args, capture_output=True, text=True)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.loads(r.stdout)))
    print(f"{'ok ' if not errors else 'BAD'} {name}: {' '.join(args)} (exit {r.returncode})")
    for e in errors:
        print("   ", list(e.path), e.message)
    bad += bool(errors)
sys.exit(bad)
PY
echo "[schema validation exit $?]"
