#!/usr/bin/env bash
# docs/fleet.md's node_exporter textfile recipe, run as written (extracted from it, so that
# the two cannot drift; only its directory is replaced by a temporary one) with the real
# cudatool on a failing node (the fake driver: exit 9), a node without a driver (exit 3)
# and one without a device (exit 4), each time over a stale passing file; then each file is
# read by Prometheus' own text parser (python3-prometheus-client).
# Usage: textfile_recipe.sh CUDATOOL FAKE_LIBCUDA FAKE_LIBNVML SOURCE_DIR PYTHON3
# Exit 77 (skipped) only where the parser is not installed.
set -euo pipefail
cudatool=$1 fake_libcuda=$2 fake_libnvml=$3 source_dir=$4 python=$5

if ! "$python" -c 'import prometheus_client.parser' 2>/dev/null; then
  echo "python3-prometheus-client is not installed (Prometheus' text parser): skipped"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
textfile_dir=/var/lib/node_exporter/textfile

# The recipe: the ```sh block of docs/fleet.md that starts with the textfile collector comment.
awk '
  /^```sh$/ { block = 1; first = 1; text = ""; next }
  block && /^```$/ { if (take) { printf "%s", text; exit } block = 0; next }
  block { if (first && $0 ~ /^# node_exporter textfile collector/) take = 1; first = 0; text = text $0 "\n" }
' "$source_dir/docs/fleet.md" > "$work/recipe.sh"
if ! grep -q "$textfile_dir" "$work/recipe.sh"; then
  echo "FAIL: no textfile recipe writing to $textfile_dir in docs/fleet.md" >&2
  exit 1
fi
mkdir -p "$work/textfile" "$work/bin"
sed "s|$textfile_dir|$work/textfile|g" "$work/recipe.sh" > "$work/recipe-here.sh"
ln -s "$(cd "$(dirname "$cudatool")" && pwd)/$(basename "$cudatool")" "$work/bin/cudatool"

failures=0
fail() {
  echo "FAIL ($1): $2" >&2
  failures=$((failures + 1))
}

# run NAME EXPECTED_EXIT UP [ENV...]: the recipe under ENV, over a stale passing file.
run() {
  local name=$1 expected=$2 up=$3
  shift 3
  rm -f "$work/textfile"/*
  printf 'cudatool_check_success 1\ncudatool_check_up 1\n' > "$work/textfile/cudatool.prom"
  local status=0
  env -u CUDATOOL_LIBCUDA -u CUDATOOL_LIBNVML -u CUDATOOL_NO_NVML PATH="$work/bin:/usr/bin:/bin" \
    "$@" sh "$work/recipe-here.sh" 2> "$work/stderr" || status=$?
  [ "$status" -eq "$expected" ] || fail "$name" "the recipe exited $status, expected $expected ($(cat "$work/stderr"))"
  local files
  files=$(cd "$work/textfile" && ls -A)
  [ "$files" = "cudatool.prom" ] || fail "$name" "the directory holds: $(echo $files)"
  "$python" - "$work/textfile/cudatool.prom" "$name" "$expected" "$up" <<'PY' || fail "$name" "the parser's verdict above"
import re, sys
from prometheus_client.parser import text_string_to_metric_families

path, name, exit_code, up = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
text = open(path, encoding="utf-8").read()
families = {f.name: f for f in text_string_to_metric_families(text)}  # raises on bad syntax
problems = []

def value(metric, **labels):
    family = families.get(metric)
    for s in family.samples if family else []:
        if all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    problems.append(f"no sample {metric} {labels}")
    return None

for f in families.values():
    if not re.fullmatch(r"cudatool_[a-z0-9_]+", f.name):
        problems.append(f"metric name {f.name}")
    if f.type != "gauge":
        problems.append(f"{f.name} is a {f.type}")
    if not f.documentation:
        problems.append(f"{f.name} has no HELP")
    if len({tuple(sorted(s.labels)) for s in f.samples}) > 1:
        problems.append(f"{f.name}'s samples differ in label names (node_exporter refuses that)")
    for s in f.samples:
        if "unit" in s.labels:
            problems.append(f"{s.name} has a unit label")
        if "pci_bus_id" in s.labels and not re.fullmatch(
                r"[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-9A-F]", s.labels["pci_bus_id"]):
            problems.append(f"pci_bus_id {s.labels['pci_bus_id']} is not nvidia-smi's form")
build = families.get("cudatool_build_info")
if not build or not build.samples or not {"version", "cuda_headers"} <= set(build.samples[0].labels):
    problems.append("no cudatool_build_info{version,cuda_headers}")
if value("cudatool_check_up") != up:
    problems.append(f"cudatool_check_up is not {up}")
if value("cudatool_check_success") != (1 if exit_code == 0 else 0):
    problems.append("cudatool_check_success is wrong")
if value("cudatool_check_exit_code") != exit_code:
    problems.append(f"cudatool_check_exit_code is not {exit_code}")
if up:
    # Every GPU's series carry dcgm-exporter's labels.
    # (gpu is NVML's index: only where NVML is there.)
    wanted = {"UUID", "pci_bus_id", "modelName", "cuda_device"} | ({"gpu"} if "NVML" in name else set())
    for s in families["cudatool_check_gpu_verdict"].samples:
        if not wanted <= set(s.labels):
            problems.append(f"a GPU's sample without dcgm-exporter's labels: {s}")
    if sum(s.value for s in families["cudatool_check_gpu_verdict"].samples
           if s.labels["verdict"] == "fail") < 1:
        problems.append("no GPU failed")
    checks = [s for s in families["cudatool_check_verdict"].samples]
    if not checks or any(s.value not in (0, 1) for s in checks):
        problems.append("cudatool_check_verdict is missing or not 0/1")
for p in problems:
    print(f"{name}: {p}", file=sys.stderr)
print(f"{name}: {len(families)} metric families parsed, {sum(len(f.samples) for f in families.values())} samples"
      + (f", {len(problems)} problems" if problems else ""))
sys.exit(1 if problems else 0)
PY
}

run "failing node" 9 1 CUDATOOL_LIBCUDA="$fake_libcuda" CUDATOOL_NO_NVML=1
run "failing node, NVML" 9 1 CUDATOOL_LIBCUDA="$fake_libcuda" CUDATOOL_LIBNVML="$fake_libnvml"
run "no driver" 3 0 CUDATOOL_LIBCUDA="$work/no-such-libcuda.so.1"
run "no device" 4 0 CUDATOOL_LIBCUDA="$fake_libcuda" FAKE_CUDA_DEVICES= CUDATOOL_NO_NVML=1

# The quantities, in base units, from the fake NVML's readings.
env -u CUDATOOL_NO_NVML PATH="$work/bin:/usr/bin:/bin" CUDATOOL_LIBCUDA="$fake_libcuda" \
  CUDATOOL_LIBNVML="$fake_libnvml" sh "$work/recipe-here.sh" 2>/dev/null || true
for metric in cudatool_check_ecc_enabled cudatool_check_ecc_uncorrected_errors \
  cudatool_check_memory_used_by_others_bytes cudatool_check_gpu_utilization_ratio; do
  grep -q "^$metric{gpu=\"0\",UUID=\"GPU-" "$work/textfile/cudatool.prom" ||
    fail "quantities" "no $metric for GPU 0"
done

if [ "$failures" -ne 0 ]; then
  echo "textfile recipe: $failures failures" >&2
  exit 1
fi
echo "textfile recipe: docs/fleet.md's block run as written on 4 nodes, each file replaced and parsed"
