#!/usr/bin/env bash
# `cudatool compile` against nvcc on a real project: NVIDIA's cuda-samples (fetched onto the
# machine, never copied into this repository). Two checks, each printing its counts:
#
#   files: every .cu under SAMPLES/Samples that `nvcc -cubin -arch=ARCH -I Common FILE`
#          compiles must compile with `cudatool compile FILE --arch ARCH -I Common`;
#          kernel names and resources are compared too (reported, not required: without
#          -p the engine is chosen for the file, and NVRTC is allowed there).
#   -p:    every .cu entry of SAMPLES/BUILD/compile_commands.json (CMake with
#          -DCMAKE_EXPORT_COMPILE_COMMANDS=ON) that nvcc compiles with the entry's own flags
#          (its --generate-code list replaced by -arch=ARCH, -c by -cubin) must compile with
#          `cudatool compile FILE -p BUILD --arch ARCH`, with every kernel's name and
#          resources equal to those of nvcc's CUBIN (read by `cudatool kernels`).
#
# Usage: tools/compile-corpus.sh CUDATOOL SAMPLES OUT [files|p|both] [SAMPLE_EVERY]
#   SAMPLES_EVERY=N takes every Nth file or entry (1: all). nvcc's own results are kept in
#   OUT/ref and reused by a later run. ARCH is $ARCH (default sm_90); JOBS parallel jobs
#   ($JOBS, default 2). Exit 1 when a file or entry nvcc compiles fails or differs (-p).
#
# Results (2026-11-24, cuda-samples c94ff366 (2025-09-05), nvcc 13.0.88, sm_90, 2 shared
# cores, no sampling; the CMake configure took CMAKE_CUDA_ARCHITECTURES=90 but the samples
# set their own list, so every entry has eight --generate-code flags, replaced as above):
#   files: 175 .cu files, nvcc compiles 159 (of the other 16, 5 launch kernels from the
#          device and need -rdc, 10 need headers not here: cudla.h, nvmedia, drm_fourcc.h,
#          boost, GLFW, DirectX/D3D, a sample's own inc/ directory; 1 redeclares a GL
#          type), cudatool fails 0 of those;
#          kernels (names and resources) equal nvcc's in 159 of 159 (also before the
#          rebase onto the kernels reader changes: 159 of 159).
#   -p:    137 .cu entries (each with -rdc=true and --extended-lambda), nvcc compiles 137,
#          cudatool fails 0, kernels equal in 137 of 137 (656 kernels, 13 of them static or
#          anonymous-namespace kernels with nvcc's __nv_static_/_GLOBAL__N_ names). The last
#          entry (binomialOptions_kernel.cu) was checked by hand after the .nv.global fix;
#          before it, 136 of 137.
#   Before this work (main at 3733f9d, every 10th entry: 13): 0 failed, 12 equal, 1 differed
#   (simpleMultiGPU.cu: __nv_static_35__cdde01c2_17_simpleMultiGPU_cu_main__Z12reduceKernel...
#   from the temporary copy, where nvcc's own build has _Z12reduceKernelPfS_i). The
#   NVRTC-with---extended-lambda failure (exit 6) hits device-only files, which the
#   sample did not include; CliCompile.NvccOnlyProjectFlagsMakeNvccTheEngine shows it.
set -uo pipefail
ct=$(realpath "$1")
samples=$(realpath "$2")
out=$(mkdir -p "$3" && realpath "$3")
mode=${4:-both}
every=${5:-1}
arch=${ARCH:-sm_90}
jobs=${JOBS:-2}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
export ct samples out arch nvcc
mkdir -p "$out/ref" "$out/ct" "$out/log"
export CUDATOOL_CACHE_DIR="$out/cache"

# One key per source: its path below SAMPLES with '/' made '__'.
key_of() { local rel=${1#"$samples"/}; echo "${rel//\//__}"; }
export -f key_of

# The kernels of a CUBIN or a compile --json document as "name regs shared local const
# threads" lines, sorted. Without -rdc nvcc names an anonymous namespace after the file and
# a number that changes with every run of nvcc itself (_GLOBAL__N__<hash>_<file>_<hash>_<n>,
# seen: 10792, 10819, 10831 for three runs on one file): that number is masked.
kernel_lines() {
  python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
ks = d.get("kernels")
if ks is None:
    ks = [k for img in d.get("images", []) for k in img.get("kernels", [])]
for k in ks:
    name = re.sub(r"\d+_GLOBAL__N__([0-9a-f]{8})_(\w+?)_([0-9a-f]{8})_\d+", r"ANON_\1_\2_\3_", k["name"])
    print(name, k["num_regs"], k["shared_size_bytes"], k["local_size_bytes"],
          k["const_size_bytes"], k["max_threads_per_block"])
' "$1" | sort
}
export -f kernel_lines

files_one() {
  local f=$1 key
  key=$(key_of "$f")
  if [ ! -e "$out/ref/$key.files.status" ]; then
    (cd "$samples" && "$nvcc" -cubin -arch="$arch" -I Common "$f" -o "$out/ref/$key.files.cubin" \
      >"$out/log/$key.files.nvcc" 2>&1)
    echo $? >"$out/ref/$key.files.status"
  fi
  [ "$(cat "$out/ref/$key.files.status")" = 0 ] || { echo "nvcc-fails $f"; return; }
  (cd "$samples" && "$ct" compile "$f" --arch "$arch" -I Common --json \
    >"$out/ct/$key.files.json" 2>"$out/log/$key.files.ct")
  local rc=$?
  if [ $rc != 0 ]; then echo "cudatool-fails($rc) $f"; return; fi
  "$ct" kernels "$out/ref/$key.files.cubin" --json >"$out/ref/$key.files.kernels.json" 2>/dev/null
  if cmp -s <(kernel_lines "$out/ref/$key.files.kernels.json") \
            <(kernel_lines "$out/ct/$key.files.json"); then
    echo "same $f"
  else
    echo "differs $f ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["engine"])' "$out/ct/$key.files.json"))"
  fi
}
export -f files_one

# nvcc's own command for an entry, as a NUL-separated argument list on stdout: the entry's
# arguments with --generate-code/-gencode/-arch dropped, -c made -cubin, -o sent to OUT/ref.
entry_command() {
  python3 - "$1" "$2" "$arch" <<'EOF'
import json, shlex, sys
db, index, arch = sys.argv[1], int(sys.argv[2]), sys.argv[3]
e = json.load(open(db))[index]
args = e.get("arguments") or shlex.split(e["command"])
out, skip = [], False
for a in args:
    if skip:
        skip = False
        continue
    if a in ("-o", "-gencode", "--generate-code", "-arch", "--gpu-architecture"):
        skip = True  # and its value
        continue
    if a.startswith(("--generate-code=", "-gencode=", "-arch=", "--gpu-architecture=")):
        continue
    out.append("-cubin" if a == "-c" else a)
sys.stdout.write("\0".join(out[1:] + ["-arch=" + arch]))  # out[0]: the compiler
EOF
}
export -f entry_command

p_one() {
  local index=$1 db=$samples/$BUILD/compile_commands.json
  local file dir key
  file=$(python3 -c 'import json,sys,os; e=json.load(open(sys.argv[1]))[int(sys.argv[2])]; print(os.path.join(e["directory"], e["file"]))' "$db" "$index")
  dir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[int(sys.argv[2])]["directory"])' "$db" "$index")
  key=$(key_of "$file").p$index
  if [ ! -e "$out/ref/$key.status" ]; then
    local -a cmd
    mapfile -d '' cmd < <(entry_command "$db" "$index")
    (cd "$dir" && "$nvcc" "${cmd[@]}" -o "$out/ref/$key.cubin" >"$out/log/$key.nvcc" 2>&1)
    echo $? >"$out/ref/$key.status"
  fi
  [ "$(cat "$out/ref/$key.status")" = 0 ] || { echo "nvcc-fails $file"; return; }
  "$ct" compile "$file" -p "$samples/$BUILD" --arch "$arch" --json >"$out/ct/$key.json" \
    2>"$out/log/$key.ct"
  local rc=$?
  if [ $rc != 0 ]; then echo "cudatool-fails($rc) $file"; return; fi
  "$ct" kernels "$out/ref/$key.cubin" --json >"$out/ref/$key.kernels.json" 2>/dev/null
  if cmp -s <(kernel_lines "$out/ref/$key.kernels.json") <(kernel_lines "$out/ct/$key.json"); then
    echo "same $file"
  else
    echo "differs $file"
  fi
}
export -f p_one
export BUILD=${BUILD:-build}

status=0
summary() {  # $1: label, $2: results file
  local total nvfail ctfail same differs
  total=$(wc -l <"$2")
  nvfail=$(grep -c '^nvcc-fails' "$2")
  ctfail=$(grep -c '^cudatool-fails' "$2")
  same=$(grep -c '^same' "$2")
  differs=$(grep -c '^differs' "$2")
  echo "$1: $total sampled, nvcc compiles $((total - nvfail)), cudatool fails $ctfail of those," \
    "kernels equal $same, differ $differs"
  grep -E '^(cudatool-fails|differs)' "$2" | sed 's/^/  /'
}

if [ "$mode" = files ] || [ "$mode" = both ]; then
  find "$samples/Samples" -name '*.cu' | sort | awk -v n="$every" 'NR % n == 0' |
    xargs -P "$jobs" -I{} bash -c 'files_one "$1"' _ {} >"$out/files.txt"
  summary files "$out/files.txt"
  grep -q '^cudatool-fails' "$out/files.txt" && status=1
fi
if [ "$mode" = p ] || [ "$mode" = both ]; then
  python3 -c '
import json, sys
for i, e in enumerate(json.load(open(sys.argv[1]))):
    if e["file"].endswith(".cu"):
        print(i)' "$samples/$BUILD/compile_commands.json" | awk -v n="$every" 'NR % n == 0' |
    xargs -P "$jobs" -I{} bash -c 'p_one "$1"' _ {} >"$out/p.txt"
  summary "-p" "$out/p.txt"
  grep -qE '^(cudatool-fails|differs)' "$out/p.txt" && status=1
fi
exit $status
