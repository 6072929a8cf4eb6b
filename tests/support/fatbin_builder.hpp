// Fatbin containers built byte by byte, for tests that need well-formed ones or every kind
// of damage: the unit tests of the binary readers and the CLI bad-input matrix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
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

}  // namespace cudatool::testing
