// Fatbin containers built byte by byte, for tests that need well-formed ones or every kind
// of damage: the unit tests of the binary readers and the CLI bad-input matrix.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "binary/fatbin.hpp"

namespace cudatool::testing {

using Bytes = std::vector<std::uint8_t>;

// Writes `value` little-endian at `at`, growing `b` where needed.
template <class T>
void put(Bytes& b, std::size_t at, T value) {
  if (b.size() < at + sizeof(T)) b.resize(at + sizeof(T));
  for (std::size_t i = 0; i < sizeof(T); ++i)
    b[at + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

// One fatbin entry: kind 2 is an ELF (CUBIN), 1 PTX; flags 0x8000 zstd, 0x2000 LZ4.
struct EntrySpec {
  std::uint16_t kind = 2;
  std::uint32_t arch = 90;
  std::uint64_t flags = 0x11;
  Bytes payload;
  std::uint32_t compressed_size = 0;
  std::uint64_t decompressed_size = 0;
  std::uint32_t header_size = 64;
};

inline Bytes entry(const EntrySpec& s) {
  Bytes b(s.header_size, 0);
  put<std::uint16_t>(b, 0, s.kind);
  put<std::uint16_t>(b, 2, 0x101);
  put<std::uint32_t>(b, 4, s.header_size);
  const std::uint64_t padded = (s.payload.size() + 7) / 8 * 8;
  put<std::uint64_t>(b, 8, padded);
  put<std::uint32_t>(b, 16, s.compressed_size);
  put<std::uint32_t>(b, 28, s.arch);
  put<std::uint64_t>(b, 40, s.flags);
  put<std::uint64_t>(b, 56, s.decompressed_size);
  b.insert(b.end(), s.payload.begin(), s.payload.end());
  b.resize(s.header_size + padded, 0);
  return b;
}

// A container (16-byte header, then the entries) of these entries.
inline Bytes container(const std::vector<Bytes>& entries) {
  Bytes body;
  for (const auto& e : entries) body.insert(body.end(), e.begin(), e.end());
  Bytes b;
  put<std::uint32_t>(b, 0, kFatbinMagic);
  put<std::uint16_t>(b, 4, 1);
  put<std::uint16_t>(b, 6, 16);
  put<std::uint64_t>(b, 8, body.size());
  b.insert(b.end(), body.begin(), body.end());
  return b;
}

inline Bytes bytes_of(const std::string& text) {
  return Bytes(text.begin(), text.end());
}

// A host ELF64 (x86-64 shared library) holding only these sections, each 8-byte aligned.
struct SectionSpec {
  std::string name;
  std::uint64_t flags = 2;  // SHF_ALLOC; 6 with SHF_EXECINSTR (code)
  Bytes contents;
};

inline Bytes host_elf(const std::vector<SectionSpec>& sections) {
  Bytes b(64, 0);
  std::string names(1, '\0');                               // .shstrtab: "" first
  std::vector<std::pair<std::size_t, std::size_t>> placed;  // offset, name offset
  for (const SectionSpec& s : sections) {
    b.resize((b.size() + 7) / 8 * 8, 0);
    placed.emplace_back(b.size(), names.size());
    names += s.name + '\0';
    b.insert(b.end(), s.contents.begin(), s.contents.end());
  }
  const std::size_t shstrtab_name = names.size();
  names += std::string(".shstrtab") + '\0';
  const std::size_t shstrtab = b.size();
  b.insert(b.end(), names.begin(), names.end());
  b.resize((b.size() + 7) / 8 * 8, 0);
  const std::size_t shoff = b.size();
  const auto header = [&](std::size_t at, std::uint32_t name, std::uint32_t type,
                          std::uint64_t flags, std::uint64_t offset, std::uint64_t size) {
    put<std::uint32_t>(b, at, name);
    put<std::uint32_t>(b, at + 4, type);
    put<std::uint64_t>(b, at + 8, flags);
    put<std::uint64_t>(b, at + 24, offset);
    put<std::uint64_t>(b, at + 32, size);
    put<std::uint64_t>(b, at + 48, 1);  // sh_addralign
  };
  b.resize(shoff + 64 * (sections.size() + 2), 0);  // the null section first
  for (std::size_t i = 0; i < sections.size(); ++i)
    header(shoff + 64 * (i + 1), static_cast<std::uint32_t>(placed[i].second), 1 /* PROGBITS */,
           sections[i].flags, placed[i].first, sections[i].contents.size());
  header(shoff + 64 * (sections.size() + 1), static_cast<std::uint32_t>(shstrtab_name),
         3 /* STRTAB */, 0, shstrtab, names.size());
  const std::uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  std::copy(std::begin(ident), std::end(ident), b.begin());
  put<std::uint16_t>(b, 16, 3);   // ET_DYN
  put<std::uint16_t>(b, 18, 62);  // EM_X86_64
  put<std::uint32_t>(b, 20, 1);
  put<std::uint64_t>(b, 40, shoff);
  put<std::uint16_t>(b, 52, 64);  // e_ehsize
  put<std::uint16_t>(b, 58, 64);  // e_shentsize
  put<std::uint16_t>(b, 60, static_cast<std::uint16_t>(sections.size() + 2));
  put<std::uint16_t>(b, 62, static_cast<std::uint16_t>(sections.size() + 1));
  return b;
}

}  // namespace cudatool::testing
