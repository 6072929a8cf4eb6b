#!/usr/bin/env bash
# The memory-pool goals, measured with `cudatool bench-pool` (host-side ns per alloc+free
# pair; see cudatool(1)). Runs the device, pinned and host backends on the goal workloads
# and prints one compact table plus a PASS/FAIL line per goal:
#   device pool median <= 50 ns, >= 1000x cuMemAlloc, >= 20x cuMemAllocAsync
#   pinned pool median <= 100 ns (4 KiB and 16 MiB requests)
#   8 threads >= 4x the single-thread throughput (device pool; host pool for reference)
#   rounding within the bin bound (6.25% for 4 bits) above the small block (256 B)
# Without a GPU, pass --host-only (or it stops at the first device run with exit 3/4).
# Usage: bench/pool.sh [--host-only] [CUDATOOL] [SECONDS_PER_ALLOCATOR] [DEVICE]
# Needs python3 (to read --json).
set -euo pipefail
host_only=0
if [[ ${1:-} == --host-only ]]; then
  host_only=1
  shift
fi
cudatool=${1:-build/apps/cudatool/cudatool}
seconds=${2:-1}
device=${3:-0}
command -v python3 >/dev/null || { echo "pool.sh: needs python3" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

n=0
run() {  # run NAME ARGS...: one bench-pool run, its JSON kept as $work/NAME.json
  local name=$1
  shift
  n=$((n + 1))
  printf '[%2d] %s: cudatool bench-pool %s\n' "$n" "$name" "$*" >&2
  "$cudatool" bench-pool --json --no-progress --duration "$seconds" "$@" >"$work/$name.json"
}

log_uniform=(--workload log-uniform --min-size 256 --max-size 64M --order random --live 1000)
if ((!host_only)); then
  run device_4k --backend device --device "$device" --size 4K
  run device_log --backend device --device "$device" "${log_uniform[@]}"
  run device_1t --backend device --device "$device" --size 4K --allocators pool --threads 1
  run device_8t --backend device --device "$device" --size 4K --allocators pool --threads 8
  run pinned_4k --backend pinned --device "$device" --size 4K
  run pinned_16m --backend pinned --device "$device" --size 16M
fi
run host_4k --backend host --size 4K
run host_log --backend host "${log_uniform[@]}"
run host_1t --backend host --size 4K --allocators pool --threads 1
run host_8t --backend host --size 4K --allocators pool --threads 8

python3 - "$work" "$host_only" <<'PY'
import json, os, sys
work, host_only = sys.argv[1], sys.argv[2] == "1"
runs = {f[:-5]: json.load(open(os.path.join(work, f))) for f in os.listdir(work)}
order = ["device_4k", "device_log", "device_1t", "device_8t", "pinned_4k", "pinned_16m",
         "host_4k", "host_log", "host_1t", "host_8t"]

def ns(v):
    return f"{v / 1e6:.2f} ms" if v >= 1e6 else f"{v / 1e3:.1f} us" if v >= 1e4 else f"{v:.1f} ns"

first = next(iter(runs.values()))
dev = next((r["device"] for r in runs.values() if r["device"]), None)
print(f"host: {first['host']['cpu']} ({first['host']['cpus']} CPUs)"
      + (f"; device {dev['ordinal']}: {dev['name']}" if dev else ""))
print(f"{'run':<11} {'allocator':<16} {'median':>10} {'p99':>10} {'pairs/s':>12} "
      f"{'speedup':>9} {'held/req':>9} {'round max':>9}")
for name in order:
    if name not in runs:
        continue
    r = runs[name]
    for a in r["allocators"]:
        sp = "-" if not a["speedup_vs_raw"] else (
            f"{a['speedup_vs_raw']:.2f}x" if a["speedup_vs_raw"] < 10 else f"{a['speedup_vs_raw']:.0f}x")
        ov = f"{a['overhead_pct']:+.1f}%" if a["overhead_pct"] is not None else "-"
        rm = f"{r['rounding']['max_overhead_pct']:.2f}%" if a["allocator"] == "pool" else ""
        print(f"{name:<11} {a['label']:<16} {ns(a['median_ns']):>10} {ns(a['p99_ns']):>10} "
              f"{a['pairs_per_second']:>12.3e} {sp:>9} {ov:>9} {rm:>9}")

def get(run, label):
    return next(a for a in runs[run]["allocators"] if a["label"] == label)

goals = []
def goal(text, ok, value):
    goals.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {text}: {value}")

print()
if not host_only:
    p, raw, st = get("device_4k", "pool"), get("device_4k", "cuMemAlloc"), get("device_4k", "cuMemAllocAsync")
    goal("device pool median <= 50 ns", p["median_ns"] <= 50, ns(p["median_ns"]))
    goal("device pool >= 1000x cuMemAlloc", raw["median_ns"] / p["median_ns"] >= 1000,
         f"{raw['median_ns'] / p['median_ns']:.0f}x")
    goal("device pool >= 20x cuMemAllocAsync", st["median_ns"] / p["median_ns"] >= 20,
         f"{st['median_ns'] / p['median_ns']:.1f}x")
    for run in ("pinned_4k", "pinned_16m"):
        p = get(run, "pool")
        goal(f"{run} pool median <= 100 ns", p["median_ns"] <= 100, ns(p["median_ns"]))
    s = runs["device_8t"]["allocators"][0]["pairs_per_second"] / runs["device_1t"]["allocators"][0]["pairs_per_second"]
    goal("device pool, 8 threads >= 4x one thread's throughput", s >= 4, f"{s:.2f}x")
s = runs["host_8t"]["allocators"][0]["pairs_per_second"] / runs["host_1t"]["allocators"][0]["pairs_per_second"]
print(f"info  host pool, 8 threads / one thread's throughput: {s:.2f}x "
      f"(on {first['host']['cpus']} CPUs)")
for run in ("device_log", "host_log"):
    if run in runs:
        r = runs[run]["rounding"]
        goal(f"{run} rounding above 256 B within {r['bound_pct']}%", r["max_overhead_pct"] < r["bound_pct"],
             f"max {r['max_overhead_pct']:.3f}%, total {r['overhead_pct']:.2f}%, "
             f"{r['small_requests']} of {r['requests']} requests in the 256 B bin")
sys.exit(0 if all(goals) else 1)
PY
