// What an image of a compiled binary is and how it is stored: the kind of a fatbin entry
// (or a bare CUBIN) and the compression nvcc applied. Values, not text: the tool spells them
// (`kernels --json`: "elf", "ptx", "ltoir", "unknown"; "none", "lz4", "zstd").
#pragma once

namespace cudatool {

// A CUBIN (ELF machine code), PTX, LTO-IR (fatbin entry kind 8: NVVM IR for a virtual
// architecture, kept for a link-time-optimizing device link, nvcc -dlto; no kernels to
// measure before that link), or a fatbin entry of a kind cudatool does not know.
enum class ImageKind { elf, ptx, lto_ir, unknown };

enum class FatbinCompression { none, lz4, zstd };

}  // namespace cudatool
