// A read-only ELF64 little-endian reader (host objects, executables, shared libraries and
// CUBINs alike): the header fields cudatool needs and the section table, every offset
// checked through ByteReader. Section names are views into the image.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "binary/byte_reader.hpp"

namespace cudatool {

inline constexpr std::uint16_t kElfMachineCuda = 190;  // EM_CUDA
inline constexpr std::uint32_t kElfNobits = 8;         // SHT_NOBITS
// NVIDIA's SHT_CUDA_SHARED: a relocatable CUBIN's .nv.shared.<kernel> (static shared memory),
// a size with no bytes in the file, like SHT_NOBITS.
inline constexpr std::uint32_t kElfCudaShared = 0x7000000a;
// The type of a relocatable CUBIN's .nv.global (uninitialized __device__ variables): also a
// size with no bytes in the file (nvcc -rdc and NVRTC -rdc write it so; 4096 bytes for a
// __device__ float[1024], its offset at the end of the file).
inline constexpr std::uint32_t kElfCudaGlobal = 0x70000007;
inline constexpr std::uint16_t kElfRelocatable = 1;  // e_type ET_REL
inline constexpr std::uint32_t kElfSymtab = 2;       // SHT_SYMTAB
inline constexpr std::uint64_t kElfExecutable = 4;   // sh_flags SHF_EXECINSTR: machine code

struct ElfSection {
  std::string_view name;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;
  std::uint64_t entsize = 0;
  bool has_contents() const {
    return type != kElfNobits && type != kElfCudaShared && type != kElfCudaGlobal && type != 0;
  }
};

struct ElfSymbol {
  std::string_view name;
  std::uint8_t info = 0;
  std::uint8_t other = 0;
  std::uint16_t section = 0;
  std::uint64_t value = 0;
  std::uint64_t size = 0;
};

class ElfFile {
 public:
  // True when the bytes start with the ELF magic.
  static bool is_elf(std::span<const std::uint8_t> bytes);
  // Throws InputError for anything that is not a well-formed ELF64 little-endian file:
  // every section with contents must lie inside the data.
  explicit ElfFile(ByteReader reader);

  const ByteReader& reader() const { return reader_; }
  std::uint16_t type() const { return type_; }  // e_type: 1 ET_REL, 2 ET_EXEC, 3 ET_DYN
  std::uint16_t machine() const { return machine_; }
  std::uint8_t abi_version() const { return abi_version_; }
  std::uint32_t flags() const { return flags_; }
  const std::vector<ElfSection>& sections() const { return sections_; }
  const ElfSection* find(std::string_view name) const;
  // The section's contents (empty for SHT_NOBITS).
  std::span<const std::uint8_t> contents(const ElfSection& s) const;
  ByteReader section_reader(const ElfSection& s) const;
  // The symbols of the first SHT_SYMTAB section (empty when there is none).
  std::vector<ElfSymbol> symbols() const;
  // The DT_NEEDED names of the SHT_DYNAMIC section (libcudart.so.12), in order; empty where
  // there is none. Names are views into the image.
  std::vector<std::string_view> needed_libraries() const;

 private:
  ByteReader reader_;
  std::uint16_t type_ = 0;
  std::uint16_t machine_ = 0;
  std::uint8_t abi_version_ = 0;
  std::uint32_t flags_ = 0;
  std::vector<ElfSection> sections_;
};

}  // namespace cudatool
