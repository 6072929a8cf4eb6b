#!/usr/bin/env bash
# Issue 22's fleet path on a GPU machine, after a build (bash .deps/on-device.sh -- bash
# tools/gpu-prometheus.sh BUILD_DIR): cudatool's Prometheus labels and JSON keys next to
# nvidia-smi's own answers, so that a join with dcgm-exporter's series can be seen to hold:
# gpu = nvidia-smi's index, UUID = its uuid, pci_bus_id = its pci.bus_id (the same text),
# modelName = its name, driver_version = its driver_version. Then docs/fleet.md's textfile recipe
# as written, on this machine, read by Prometheus' text parser where it is installed.
set -uo pipefail
build=${1:-/tmp/gpu-build}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
ct=$build/apps/cudatool/cudatool
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run nvidia-smi --query-gpu=index,uuid,pci.bus_id,name,driver_version --format=csv
"$ct" check --skip peer --format prometheus > "$work/check.prom"
echo "[cudatool check --format prometheus: exit $?]"
grep -E '^cudatool_(build_info|check_up|check_success|check_exit_code|check_driver_info|check_gpu_verdict\{.*verdict="pass")' "$work/check.prom"
grep -E '^cudatool_check_(host_to_device|device_to_host|device_to_device|pcie_link)(_min)?_bytes_per_second' "$work/check.prom"

# The comparison: each GPU's labels against nvidia-smi's row with the same index.
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name --format=csv,noheader > "$work/smi.csv"
"$ct" check --only identity --json > "$work/check.json"
"$ct" devices --json > "$work/devices.json"
python3 - "$work" "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" <<'PY'
import csv, json, re, sys
work, smi_driver = sys.argv[1], sys.argv[2].strip()
smi = {row[0].strip(): [c.strip() for c in row] for row in csv.reader(open(f"{work}/smi.csv"))}
labels = []
for line in open(f"{work}/check.prom"):
    m = re.match(r'cudatool_check_gpu_verdict\{(.*)\} 1$', line.strip())
    if m:
        labels.append(dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1))))
problems = 0
for l in labels:
    row = smi.get(l.get("gpu", "?"))
    got = [l.get("gpu"), l.get("UUID"), l.get("pci_bus_id"), l.get("modelName")]
    print("cudatool  ", got, "cuda_device", l.get("cuda_device"))
    print("nvidia-smi", row)
    if row != got:
        print("  MISMATCH")
        problems += 1
check, devices = json.load(open(f"{work}/check.json")), json.load(open(f"{work}/devices.json"))
print("check --json: schema_version", check["schema_version"], "driver_version", check.get("driver_version"),
      "cuda_version", check.get("cuda_version"), "| devices --json: driver_version", devices.get("driver_version"),
      "| nvidia-smi:", smi_driver)
if check.get("driver_version") != smi_driver or devices.get("driver_version") != smi_driver:
    print("  MISMATCH: driver_version")
    problems += 1
for d in check["devices"]:
    row = smi.get(str(d.get("nvml_index")))
    print("check --json device", d["ordinal"], "nvml_index", d.get("nvml_index"), d["pci_bus_id"],
          d.get("pci_bus_id_nvml"), "| nvidia-smi", row and row[2])
    if not row or row[2] != d.get("pci_bus_id_nvml") or row[1] != d["uuid"]:
        print("  MISMATCH")
        problems += 1
print("labels vs nvidia-smi:", "all equal" if problems == 0 else f"{problems} mismatches")
sys.exit(1 if problems else 0)
PY
echo "[comparison: exit $?]"

# docs/fleet.md's recipe as written (its directory replaced), on this GPU; then the parser.
awk '/^```sh$/{b=1;f=1;t="";next} b&&/^```$/{if(k){printf "%s",t;exit}b=0;next}
     b{if(f&&$0~/^# node_exporter textfile collector/)k=1;f=0;t=t $0 "\n"}' "$source_dir/docs/fleet.md" |
  sed "s|/var/lib/node_exporter/textfile|$work|g" > "$work/recipe.sh"
mkdir -p "$work/bin" && ln -s "$(cd "$(dirname "$ct")" && pwd)/cudatool" "$work/bin/cudatool"
PATH="$work/bin:$PATH" sh "$work/recipe.sh"
echo "[recipe: exit $?]; files: $(cd "$work" && ls cudatool.prom*)"
python3 -c 'import sys
from prometheus_client.parser import text_string_to_metric_families as parse
families = list(parse(open(sys.argv[1]).read()))
print(len(families), "families,", sum(len(f.samples) for f in families), "samples parsed")' "$work/cudatool.prom" ||
  echo "(python3-prometheus-client missing: not parsed here; the suite parses the fake driver's)"
# With CUDA_VISIBLE_DEVICES naming the last GPU, gpu (NVML's index) stays nvidia-smi's, and
# cuda_device is 0.
last=$(nvidia-smi --query-gpu=index --format=csv,noheader | tail -1 | tr -d ' ')
CUDA_VISIBLE_DEVICES=$last "$ct" check --only identity --format prometheus | grep '^cudatool_check_gpu_verdict{.*} 1$'
