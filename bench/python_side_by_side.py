#!/usr/bin/env python3
"""Two builds of the Python module side by side, interleaved round by round on one machine
(bench/RESULTS.md, "Python module, issue 35"): `python -X importtime -c 'import cudatool'`
(the cumulative microseconds of `cudatool`, a fresh interpreter each time), one
OccupancyRecord call, OccupancyRecord.to_dict(), and reading a large result: parsing a
`kernels --json` document of 100,000 kernels (made up, the keys of a real one) and reading
three fields of each kernel by iterating it, per kernel. Prints each figure's median and the
ratio after/before (below 1: faster).

Usage: python bench/python_side_by_side.py BEFORE_DIR AFTER_DIR [ROUNDS]
(each DIR holds the cudatool package: build/python of a build with -DCUDATOOL_BUILD_PYTHON=ON)
"""

import os
import re
import statistics
import subprocess
import sys

PROBE = r"""
import time, cudatool
d = cudatool.DeviceData("sm_90")
R = cudatool.OccupancyRecord
n = 200_000
t = time.perf_counter()
for _ in range(n):
    R(d, 256, 0, 64)
call = (time.perf_counter() - t) / n
r = R(d, 256, 0, 64)
m = 2_000
t = time.perf_counter()
for _ in range(m):
    r.to_dict()
to_dict = (time.perf_counter() - t) / m
import json
kernel = {"file": "lib.so", "member": None, "arch": "sm_90", "image": 0, "name": "k",
          "demangled": "k", "num_regs": 32, "shared_size_bytes": 0, "local_size_bytes": 0,
          "const_size_bytes": 0, "max_threads_per_block": 1024, "num_barriers": 1,
          "launch_bounds_max_threads": None, "required_block_size": None,
          "cluster_dims": None, "max_registers": None, "relocatable": False,
          "stack_unknown": False, "code_size_bytes": 4096, "spill_store_bytes": 0,
          "spill_load_bytes": 0,
          "occupancy": {"threads": 256, "tb_per_mp": 8, "warps_per_mp": 64, "occupancy": 1.0,
                        "limited_by": "warps", "reason": None, "max_active_clusters": None,
                        "cluster_reason": None}}
k = 100_000
text = json.dumps({"schema_version": 1, "kernels": [dict(kernel, name=f"k{i}")
                                                     for i in range(k)],
                   "images": [], "files": []}).encode()
t = time.perf_counter()
total = 0
for kernel in cudatool.Kernels(text, [], False):
    total += kernel.num_regs + kernel.occupancy.threads + len(kernel.name)
print(call, to_dict, (time.perf_counter() - t) / k)
"""


def run(directory, arguments):
    environment = dict(os.environ, PYTHONPATH=directory, CUDATOOL_LIBCUDA="/nonexistent")
    return subprocess.run([sys.executable, *arguments], env=environment, check=True,
                          capture_output=True, text=True)


def import_us(directory):
    err = run(directory, ["-X", "importtime", "-c", "import cudatool"]).stderr
    for line in err.splitlines():
        fields = [f.strip() for f in line.split("|")]
        if len(fields) == 3 and fields[2] == "cudatool":
            return int(re.sub(r"\D", "", fields[1]))
    raise RuntimeError("no cudatool line in -X importtime's output")


def main():
    before, after = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    figures = {side: {"import": [], "call": [], "to_dict": [], "kernels": []}
               for side in ("before", "after")}
    for _ in range(rounds):
        for side, directory in (("before", before), ("after", after)):
            figures[side]["import"].append(import_us(directory) / 1e6)
            call, to_dict, kernels = map(float, run(directory, ["-c", PROBE]).stdout.split())
            figures[side]["call"].append(call)
            figures[side]["to_dict"].append(to_dict)
            figures[side]["kernels"].append(kernels)
    for name, key, unit, scale in (
            ("import cudatool", "import", "ms", 1e3),
            ("OccupancyRecord(...)", "call", "us", 1e6),
            ("OccupancyRecord.to_dict()", "to_dict", "us", 1e6),
            ("Kernels: parse and read 3 fields, per kernel", "kernels", "us", 1e6)):
        b = statistics.median(figures["before"][key])
        a = statistics.median(figures["after"][key])
        print(f"{name}: before {b * scale:.3f} {unit}, after {a * scale:.3f} {unit}, "
              f"after/before {a / b:.3f} (medians of {rounds} interleaved rounds)")


if __name__ == "__main__":
    main()
