#!/usr/bin/env bash
# Builds `cudatool compat`'s -gencode matrix: one fatbin per case (the name says what it
# holds), for the rule tests (tests/lib/compat/test_load_rules.cpp) and for the driver
# comparison on a GPU (tools/compat_vs_driver). Also a fatbin whose PTX states ISA 9.9,
# newer than any driver compiles (its PTX text edited, put in a fatbin by fatbinary).
# Usage: make_matrix.sh NVCC OUTDIR
set -euo pipefail
nvcc=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$here/kernel.cu
mkdir -p "$out"
fatbin() {  # NAME -gencode...
  local name=$1
  shift
  "$nvcc" -fatbin "$src" -o "$out/$name.fatbin" "$@"
}
g() { echo "-gencode=arch=$1,code=$2"; }
fatbin sm_75 "$(g compute_75 sm_75)"
fatbin sm_80 "$(g compute_80 sm_80)"
fatbin compute_80 "$(g compute_80 compute_80)"
fatbin sm_86+compute_80 "$(g compute_80 compute_80)" "$(g compute_86 sm_86)"
fatbin sm_80+compute_90 "$(g compute_80 sm_80)" "$(g compute_90 compute_90)"
fatbin sm_90+compute_80 "$(g compute_90 sm_90)" "$(g compute_80 compute_80)"
fatbin sm_89 "$(g compute_89 sm_89)"
fatbin sm_90 "$(g compute_90 sm_90)"
fatbin sm_90a "$(g compute_90a sm_90a)"
fatbin compute_90a "$(g compute_90a compute_90a)"
fatbin compute_90 "$(g compute_90 compute_90)"
fatbin compute_100 "$(g compute_100 compute_100)"
fatbin compute_100f "$(g compute_100f compute_100f)"
fatbin sm_100f "$(g compute_100f sm_100f)"
fatbin sm_100a "$(g compute_100a sm_100a)"
fatbin sm_103 "$(g compute_103 sm_103)"
fatbin sm_110 "$(g compute_110 sm_110)"
fatbin sm_120+compute_120 "$(g compute_120 '[sm_120,compute_120]')"
fatbin sm_121a "$(g compute_121a sm_121a)"
fatbin lto_80 "$(g compute_80 lto_80)"
fatbin lto_90+sm_90 "$(g compute_90 '[lto_90,sm_90]')"
"$nvcc" -fatbin -dc "$src" -o "$out/sm_90_relocatable.fatbin" "$(g compute_90 sm_90)"
# PTX of ISA 9.9 (no driver compiles it) and of this toolkit's ISA, for compute_80.
"$nvcc" -ptx "$src" -o "$out/kernel_80.ptx" -arch=compute_80
sed 's/^\.version .*/.version 9.9/' "$out/kernel_80.ptx" > "$out/kernel_80_isa99.ptx"
fatbinary="$(dirname "$(command -v "$nvcc")")/fatbinary"
"$fatbinary" --create="$out/compute_80_isa99.fatbin" --image3=kind=ptx,sm=80,file="$out/kernel_80_isa99.ptx"
"$nvcc" -cubin "$src" -o "$out/kernel_80.cubin" -arch=sm_80
"$fatbinary" --create="$out/sm_80+compute_80_isa99.fatbin" \
  --image3=kind=ptx,sm=80,file="$out/kernel_80_isa99.ptx" \
  --image3=kind=elf,sm=80,file="$out/kernel_80.cubin"
rm -f "$out"/*.ptx "$out"/*.cubin
echo "compat matrix: $(ls "$out"/*.fatbin | wc -l) fatbins in $out"
