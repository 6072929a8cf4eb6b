#!/usr/bin/env python3
"""The Python module's speed (bench/RESULTS.md, "Python module"): OccupancyRecord per call
(goal <= 1 us), `import cudatool` (goal <= 20 ms, a fresh interpreter each time, the
interpreter's own start subtracted), and kernels() on a large library against the CLI
(`cudatool kernels --json --no-progress`, output to /dev/null; goal within 10%).

Usage: python bench/python_occupancy.py [LIBRARY] [--cli PATH]
(LIBRARY: default /usr/local/cuda/lib64/libcublasLt.so; the CLI: default `cudatool` on PATH)
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

import cudatool


def best_of(runs, function):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library", nargs="?", default="/usr/local/cuda/lib64/libcublasLt.so")
    parser.add_argument("--cli", default=shutil.which("cudatool"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    devdata = cudatool.DeviceData("sm_90")
    calls = 1_000_000
    record = cudatool.OccupancyRecord

    def records():
        for _ in range(calls):
            record(devdata, 256, 0, 64)

    best, median = best_of(args.runs, records)
    print(f"OccupancyRecord(DeviceData('sm_90'), 256, 0, 64): {best / calls * 1e6:.3f} us a call "
          f"(best of {args.runs} x {calls:,}; median {median / calls * 1e6:.3f} us)")
    r = record(devdata, 256, 0, 64)
    reads = 1_000_000
    start = time.perf_counter()
    for _ in range(reads):
        r.tb_per_mp
    print(f"reading record.tb_per_mp: {(time.perf_counter() - start) / reads * 1e9:.0f} ns")

    def start_python(code):
        return best_of(args.runs * 4, lambda: subprocess.run([sys.executable, "-c", code],
                                                               check=True))

    empty, _ = start_python("pass")
    imported, imported_median = start_python("import cudatool")
    print(f"import cudatool: {(imported - empty) * 1e3:.1f} ms (interpreter start {empty * 1e3:.1f} "
          f"ms subtracted; median of the import run {imported_median * 1e3:.1f} ms)")

    if not os.path.exists(args.library):
        print(f"kernels(): {args.library} not found, skipped")
        return
    if not args.cli:
        print("kernels(): no cudatool executable (--cli), skipped")
        return
    # Interleaved round by round (RESULTS.md: ratios side by side, never across runs).
    cli_times, module_times, parsed_times = [], [], []
    with open(os.devnull, "w") as null:
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([args.cli, "kernels", "--json", "--no-progress", args.library],
                           stdout=null, check=True)
            cli_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = cudatool.kernels(args.library)
            module_times.append(time.perf_counter() - start)
            result.to_dict()
            parsed_times.append(time.perf_counter() - start)
            del result
    cli, module, parsed = min(cli_times), min(module_times), min(parsed_times)
    cli_median, module_median, parsed_median = (statistics.median(t) for t in
                                                (cli_times, module_times, parsed_times))
    count = len(cudatool.kernels(args.library).to_dict()["kernels"])
    print(f"kernels({os.path.basename(args.library)}), {count:,} kernels: CLI {cli:.3f} s, "
          f"kernels() {module:.3f} s ({(module / cli - 1) * 100:+.1f}%), kernels().to_dict() "
          f"{parsed:.3f} s ({(parsed / cli - 1) * 100:+.1f}%) (best of {args.runs}; medians "
          f"{cli_median:.3f} / {module_median:.3f} / {parsed_median:.3f} s)")


if __name__ == "__main__":
    main()
