#!/usr/bin/env bash
# `cudatool compat` on a real CUDA 11 wheel nobody here built: faiss-gpu-cu11 1.14.1 from
# PyPI (48 MB, fetched once into CACHE_DIR), whose libfaiss holds SASS for sm_70 and sm_80
# only and no PTX. On sm_90 every container of it cannot run (exit 11, "older GPUs"), on
# sm_80 and sm_86 it runs natively (exit 0), and the wheel's members are read in memory.
# Skips (77) where PyPI cannot be reached or libzip is not on this machine.
# Usage: real_wheel.sh CUDATOOL CACHE_DIR
set -uo pipefail
ct=$1
cache=$2
wheel_name=faiss_gpu_cu11-1.14.1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
mkdir -p "$cache"
if [ ! -f "$cache/$wheel_name" ]; then
  timeout 300 python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$cache" \
    'faiss-gpu-cu11==1.14.1' >/dev/null 2>&1 || { echo "skipped: PyPI not reachable"; exit 77; }
fi
wheel=$cache/$wheel_name
[ -f "$wheel" ] || { echo "skipped: $wheel_name not downloaded"; exit 77; }
export CUDATOOL_LIBCUDA=/nonexistent
out=$("$ct" compat --arch sm_90 "$wheel" 2>&1)
rc=$?
[ $rc -eq 3 ] && { echo "skipped: $out"; exit 77; }
fail() { echo "FAIL: $*"; echo "$out"; exit 1; }
[ $rc -eq 11 ] || fail "sm_90: exit $rc, expected 11"
echo "$out" | grep -q '^CANNOT RUN .*libfaiss-.*\.so  \[faiss_gpu_cu11 1.14.1\]: cannot run on sm_90: [0-9]* of [0-9]* containers hold only code for older GPUs (SASS sm_70, sm_80; PTX none)' ||
  fail "sm_90: no verdict line for libfaiss"
out=$("$ct" compat --json --arch sm_80,8.6 "$wheel" 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "sm_80/sm_86: exit $rc, expected 0"
python3 - "$out" <<'PY' || fail "sm_80/sm_86: unexpected document"
import json, sys
d = json.loads(sys.argv[1])
f = [f for f in d["files"] if "libfaiss" in f["path"]]
assert len(f) == 1, f
v = f[0]["verdicts"]
assert [x["verdict"] for x in v] == ["native", "native"], v
assert v[0]["native"] > 100 and v[0]["failed"] == 0, v[0]
assert f[0]["sass"] == ["sm_70", "sm_80"] and f[0]["ptx"] == [], f[0]
print("libfaiss:", v[0]["native"], "containers native on sm_80 and sm_86")
PY
echo "1 passed, 0 failed"
