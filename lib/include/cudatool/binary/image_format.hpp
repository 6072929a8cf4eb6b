// What an image of a compiled binary is and how it is stored: the kind of a fatbin entry
// (or a bare CUBIN) and the compression nvcc applied. Values, not text: the tool spells them
// (`kernels --json`: "elf", "ptx", "lto_ir", "unknown"; "none", "lz4", "zstd").
#pragma once

namespace cudatool {

// A CUBIN (ELF machine code), PTX, LTO-IR (fatbin entry kind 8: NVVM IR that nvcc -dlto or
// code=lto_XX keeps for a link-time-optimising device link; no driver loads it as it is), or
// a fatbin entry of a kind cudatool does not know.
enum class ImageKind { elf, ptx, lto_ir, unknown };

// A PTX ISA version, as a PTX file's `.version 9.0` directive states it: what a driver must
// know to JIT-compile it (CUDA 13.0's driver compiles up to 9.0).
struct PtxVersion {
  int major = 0;
  int minor = 0;
  friend bool operator==(const PtxVersion&, const PtxVersion&) = default;
  friend auto operator<=>(const PtxVersion&, const PtxVersion&) = default;
};

enum class FatbinCompression { none, lz4, zstd };

}  // namespace cudatool
