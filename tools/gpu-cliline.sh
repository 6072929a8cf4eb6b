#!/usr/bin/env bash
# Issue 21's library/CLI line on a GPU machine: the library's messages now name the caller's
# source (the tool passes its flags), and the exit codes are the app's. What the tool prints
# must be what it printed before: each invocation below runs with the build before the change
# and the build after, through the real driver and NVML, and their stderr, exit status and
# (numbers masked, where the run measures) stdout are compared.
# Usage: bash tools/gpu-cliline.sh BEFORE_BINARY AFTER_BINARY
set -uo pipefail
before=$1 after=$2
out=${OUT:-/tmp/gpu-cliline}
mkdir -p "$out"
differ=0 n=0
compare() {
  n=$((n + 1))
  local b="$out/$n.before" a="$out/$n.after"
  "$before" "$@" >"$b.out" 2>"$b.err"
  echo $? >"$b.rc"
  "$after" "$@" >"$a.out" 2>"$a.err"
  echo $? >"$a.rc"
  # Measured values (times, rates, readings) move between runs: numbers are masked.
  for f in "$b.out" "$a.out"; do sed -i -E 's/[0-9]+(\.[0-9]+)?/N/g' "$f"; done
  for ext in err rc out; do
    if ! cmp -s "$b.$ext" "$a.$ext"; then
      echo "DIFFERS ($ext): cudatool $*"
      diff "$b.$ext" "$a.$ext" | head -6
      differ=$((differ + 1))
    fi
  done
  echo "rc=$(cat "$a.rc") cudatool $* :: $(head -c 160 "$a.err" | tr '\n' ' ')"
}
count=$("$after" devices --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
missing=$((count + 3))
for d in "$missing" 0000:ff:00.0 GPU-ffffffff banana; do
  compare attrs --device "$d" warp_size
  compare occupancy --device "$d" --threads 256
  compare check --only identity --device "$d"
  compare bench-pool --backend device --device "$d" --iterations 10
  compare compile tests/data/compile/saxpy.cu --no-cache --load --device "$d"
done
compare attrs --device 0 --fresh warp_size
compare occupancy --device 0 --threads 256
compare bench-pool --backend device --device 0 --iterations 1000 --warmup 10
compare bench-pool --backend device --threads 0
compare bench-pool --backend device --workload uniform --min-size 2M --max-size 1M
compare check --only occupancy --max-used-memory 1K
compare check --only occupancy --require-idle --max-used-memory 1K
compare check --only occupancy --max-used-memory 1K --json
compare check --only compute --skip peer
echo "$n invocations, $differ files differ"
[[ $differ == 0 ]]
