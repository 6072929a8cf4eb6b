// Static archives (`ar`, as GNU ar and nvcc -lib write them): the members, by name, as
// views into the archive. GNU long names ("//" table) and BSD "#1/<len>" names are read;
// the symbol tables ("/", "/SYM64/", "__.SYMDEF") are skipped; thin archives are refused.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cudatool/binary/byte_reader.hpp"

namespace cudatool {

struct ArchiveMember {
  std::string name;
  ByteReader data;  // the member's bytes, offsets in errors those of the archive
};

bool is_ar_archive(std::span<const std::uint8_t> bytes);
// Throws UsageError for a malformed archive.
std::vector<ArchiveMember> read_ar_archive(const ByteReader& r);

}  // namespace cudatool
