#!/usr/bin/env bash
# The device cache on a GPU machine (issue 24), after `bash .deps/on-device.sh` built into
# /tmp/gpu-build:
#   SKIP_TESTS=1 bash .deps/on-device.sh -- bash tools/gpu-devices.sh /tmp/gpu-build
# For each CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER setting and each command, three runs must
# print the same bytes (stdout, stderr, exit code): the cuInit path with the cache off (as
# before the cache existed), the cuInit path that refreshes the entry (--fresh), and the
# cache hit that follows. A hit must not load libcuda (the loader's own LD_DEBUG=files
# trace). Then the timings (bench/devices.sh). Prints PASS/FAIL lines and a summary; exits 1
# on any FAIL.
set -uo pipefail
build=${1:-/tmp/gpu-build}
ct=$build/apps/cudatool/cudatool
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME=$work/cache
mkdir -p "$XDG_CACHE_HOME"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER CUDA_DEVICE CUDATOOL_FRESH CUDATOOL_LIBCUDA CUDATOOL_NO_NVML
pass=0 fail=0
ok() { echo "PASS $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

nvidia-smi -L
gpus=$(nvidia-smi -L | grep -c '^GPU ')
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
echo "GPUs: $gpus; first UUID: $uuid; driver: $(cat /proc/driver/nvidia/version | head -1)"

# Each setting: a label and the environment assignments (none = unset).
settings=(
  "unset|"
  "visible=0|CUDA_VISIBLE_DEVICES=0"
  "visible=uuid|CUDA_VISIBLE_DEVICES=$uuid"
  "visible=uuid-prefix|CUDA_VISIBLE_DEVICES=${uuid:0:12}"
  "visible=empty|CUDA_VISIBLE_DEVICES="
  "visible=$gpus(hidden)|CUDA_VISIBLE_DEVICES=$gpus"
  "order=PCI_BUS_ID|CUDA_DEVICE_ORDER=PCI_BUS_ID"
  "order=PCI_BUS_ID,visible=0|CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0"
)
if [[ $gpus -ge 2 ]]; then
  settings+=("visible=1,0|CUDA_VISIBLE_DEVICES=1,0" "visible=1|CUDA_VISIBLE_DEVICES=1")
fi
commands=(
  "devices"
  "devices --json"
  "attrs"
  "attrs --json"
  "attrs multiprocessor_count max_shared_memory_per_block_optin warp_size"
  "attrs --json compute_mode ecc_enabled kernel_exec_timeout"
  "attrs --device 0 --json"
  "attrs --device $uuid --json"
  "occupancy --device 0 --threads 256 --regs 32 --json"
  "occupancy --device 0 --threads 1024 --regs 64 --smem 49152"
  "occupancy --device 0 --threads 128 --smem 100000 --sweep --json"
)
if [[ $gpus -ge 2 ]]; then
  commands+=("occupancy --device 1 --threads 256 --regs 32 --json" "attrs --device 1 --json")
fi

# run NAME ENV CMD [EXTRA...]: stdout, stderr and the exit code into $work/NAME.
run() {
  local name=$1 assignments=$2 cmd=$3
  shift 3
  # shellcheck disable=SC2086
  env $assignments "$@" "$ct" $cmd >"$work/$name.out" 2>"$work/$name.err"
  echo "exit $?" >>"$work/$name.out"
}

for setting in "${settings[@]}"; do
  label=${setting%%|*}
  assignments=${setting#*|}
  for cmd in "${commands[@]}"; do
    # The cache off: no cache directory can be found (neither XDG_CACHE_HOME nor HOME).
    run off "$assignments" "$cmd" XDG_CACHE_HOME= HOME=/nonexistent-cudatool-home
    run fresh "$assignments" "$cmd --fresh"
    run hit "$assignments" "$cmd"
    # Which path the warm run takes (a build with test hooks says; the variable is not part of
    # the cache's key).
    # shellcheck disable=SC2086
    path=$(env $assignments CUDATOOL_TEST_DEVICE_CACHE_TRACE=1 "$ct" $cmd 2>&1 >/dev/null |
           grep -o 'device cache: [a-z]*' | head -1)
    path=${path#device cache: }
    if cmp -s "$work/off.out" "$work/fresh.out" && cmp -s "$work/off.out" "$work/hit.out" &&
       cmp -s "$work/off.err" "$work/fresh.err" && cmp -s "$work/off.err" "$work/hit.err"; then
      if [[ $(tail -1 "$work/hit.out") == "exit 0" && -n $path && $path != hit ]]; then
        bad "[$label] cudatool $cmd: same output, but the warm run took the $path path"
      else
        ok "[$label] cudatool $cmd: cache off = --fresh = warm ($(tail -1 "$work/hit.out"); warm run: ${path:-no trace, a build without test hooks})"
      fi
    else
      bad "[$label] cudatool $cmd: outputs differ"
      diff "$work/off.out" "$work/hit.out" | head -20
      diff "$work/off.err" "$work/hit.err" | head -5
    fi
  done
done

# A hit never initializes CUDA. libcuda.so.1 cannot tell it on this host: NVML loads it during
# nvmlInit (LD_DEBUG names libnvidia-ml.so.1 as the loader, on the first run and on hits
# alike), so cudatool's own dlopen of it on the first run finds it loaded already. The trace
# (test hook CUDATOOL_TEST_DEVICE_CACHE_TRACE; a RelWithDebInfo build has test hooks) names
# the path taken: the first run with a new environment refreshes the entry through cuInit,
# the second is a hit. (The fake driver's tests see cuInit itself: FAKE_CUDA_INIT_LOG.)
for cmd in "devices" "devices --json" "attrs" "attrs warp_size" "occupancy --device 0 --threads 256"; do
  # A CUDA_* variable of its own makes a new entry: the first run refreshes it, the next hit.
  probe="CUDA_CACHE_PROBE=$RANDOM$RANDOM"
  for n in 1 2; do
    # shellcheck disable=SC2086
    env "$probe" CUDATOOL_TEST_DEVICE_CACHE_TRACE=1 LD_DEBUG=files "$ct" $cmd >/dev/null 2>"$work/ld$n"
  done
  first=$(grep -o 'device cache: [a-z]*' "$work/ld1" | head -1)
  second=$(grep -o 'device cache: [a-z]*' "$work/ld2" | head -1)
  loaders=$(grep -o 'file=libcuda[^ ]* \[0\]; *dynamically loaded by [^ ]*' "$work/ld2" |
    sed 's/.*loaded by //' | sort -u | tr '\n' ' ')
  if [ "$first" = "device cache: refreshed" ] && [ "$second" = "device cache: hit" ]; then
    ok "cudatool $cmd: ${first#device cache: }, then ${second#device cache: } (libcuda on the hit loaded by: ${loaders:-nobody})"
  else
    bad "cudatool $cmd: first run '$first', second '$second'"
  fi
done

# The entry's place and modes.
dir=$XDG_CACHE_HOME/cudatool/devices
ls -la "$dir"
if [[ $(stat -c %a "$dir") == 700 ]] && ! find "$dir" -type f ! -perm 600 | grep -q .; then
  ok "cache directory 0700, entries 0600"
else
  bad "cache directory or entry modes"
fi

echo "--- timings"
bash "$here/bench/devices.sh" "$ct" "${ROUNDS:-20}" || bad "bench/devices.sh failed"
echo "SUMMARY: $pass PASS, $fail FAIL"
[[ $fail -eq 0 ]]
