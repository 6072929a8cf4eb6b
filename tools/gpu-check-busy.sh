#!/usr/bin/env bash
# `cudatool check` on a GPU that others use (issue 26), after `bash .deps/on-device.sh` built
# into /tmp/gpu-build:  SKIP_TESTS=1 bash .deps/on-device.sh -- bash tools/gpu-check-busy.sh
# Needs python3 with torch on the GPU machine. Shows, with the time of every run:
#   - an idle GPU: check passes, --require-idle too;
#   - a memory hog (another process holding all but 1 GiB): the occupancy verdict names its
#     pid and size; --require-idle exits 9;
#   - a compute hog (bf16 matmuls in a loop): five runs give the same verdicts, none a
#     hardware fail, the measurements marked shared; --require-idle exits 9;
#   - the check tests of both test binaries on the GPU.
set -uo pipefail
build=${BUILD:-/tmp/gpu-build}
ct=${CUDATOOL:-$build/apps/cudatool/cudatool}
here=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/gpu-out}; mkdir -p "$out"
TIMEFORMAT='[%R s]'
section() { printf '\n===== %s =====\n' "$*"; }
# Runs a command, printing it, its exit status and its wall time.
run() { echo "\$ $*"; time { "$@"; echo "[exit $?]"; }; }
# Runs check and prints only the lines that say something (not the health passes).
check_brief() {
  echo "\$ $ct check $*"
  time { "$ct" check "$@" > "$out/last.txt"; echo "[exit $?]"; }
  grep -vE '^  (pass|skipped) +(ecc_|retired|row_remap|pcie_link|nvlink|identity|count|homogeneous)' \
    "$out/last.txt"
}
validate() {  # a --json document against the schema (with the key print_json adds)
  python3 - "$1" "$here/share/schemas/check.schema.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
try:
    import jsonschema
    jsonschema.validate(doc, json.load(open(sys.argv[2])))
    print(sys.argv[1].rsplit("/", 1)[-1] + ": valid against check.schema.json")
except ImportError:
    print("jsonschema not installed: not validated")
shared = [c["name"] for d in doc["devices"] for c in d["checks"] if "shared_with" in c]
print("shared_with on:", ", ".join(shared) or "none")
PY
}
# Starts a hog (python3 + torch) in the background and waits until it says it is ready.
start_hog() {
  local kind=$1 ready="$out/hog-$1.ready"
  rm -f "$ready"
  python3 - "$kind" "$ready" <<'PY' &
import os, sys, time, torch
kind, ready = sys.argv[1], sys.argv[2]
if kind == "memory":
    free, total = torch.cuda.mem_get_info()
    held = torch.empty(free - (1 << 30), dtype=torch.uint8, device="cuda")
    free, total = torch.cuda.mem_get_info()
    print(f"memory hog pid {os.getpid()}: holds {held.numel() / 2**30:.1f} GiB, "
          f"{free / 2**30:.2f} of {total / 2**30:.1f} GiB free", flush=True)
    open(ready, "w").write("ready")
    time.sleep(900)
else:
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
    b = torch.randn_like(a)
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    print(f"compute hog pid {os.getpid()}: bf16 8192x8192 matmuls in a loop", flush=True)
    open(ready, "w").write("ready")
    while True:
        for _ in range(50):
            c = a @ b
        torch.cuda.synchronize()
PY
  hog=$!
  for _ in $(seq 1 120); do [ -e "$ready" ] && break; sleep 0.5; done
  [ -e "$ready" ] || { echo "hog did not start"; kill "$hog" 2>/dev/null; return 1; }
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
  nvidia-smi --query-gpu=utilization.gpu,memory.used,memory.total,clocks_event_reasons.active --format=csv
}
stop_hog() { kill "$hog" 2>/dev/null; wait "$hog" 2>/dev/null; sleep 1; }

nvidia-smi -L
echo "PID namespace: $(readlink /proc/self/ns/pid) (process names are read in pid:[4026531836] only)"
nvidia-smi --query-gpu=index,pci.bus_id,compute_mode,memory.used,utilization.gpu --format=csv

section "idle"
run "$ct" check
check_brief --require-idle

section "memory hog: all but 1 GiB held by another process"
if start_hog memory; then
  check_brief
  echo "\$ $ct check --json"; "$ct" check --json > "$out/memory-hog.json"; echo "[exit $?]"
  validate "$out/memory-hog.json"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['devices'][0]; print(json.dumps(d['occupancy'], indent=1))" "$out/memory-hog.json"
  check_brief --require-idle
  check_brief --only occupancy --max-used-memory 80GiB
  stop_hog
fi

section "compute hog: bf16 matmuls in a loop"
if start_hog compute; then
  for i in 1 2 3 4 5; do
    echo "--- run $i"
    check_brief
  done
  echo "--- verdicts of five more runs, one line each (exit, device verdict, every check's verdict)"
  for i in 1 2 3 4 5; do
    "$ct" check --json > "$out/compute-hog-$i.json"; rc=$?
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], d['verdict'], ' '.join(c['name']+'='+c['verdict'] for c in d['devices'][0]['checks']), '%.2f s' % d['duration_s'])" "$out/compute-hog-$i.json" "exit $rc"
  done
  validate "$out/compute-hog-1.json"
  check_brief --require-idle
  stop_hog
fi

section "idle again"
check_brief
check_brief --require-idle

section "check tests on the GPU"
"$build/tests/cudatool_cli_tests" --gtest_filter='CliCheck*' 2>&1 | grep -vE '^\[ +(RUN|OK) ' | tail -25
"$build/tests/cudatool_unit_tests" --gtest_filter='Check*' 2>&1 | tail -4
