// Static archives (`ar`, as GNU ar and nvcc -lib write them): the members, by name, as
// views into the archive. GNU long names ("//" table) and BSD "#1/<len>" names are read;
// the symbol tables ("/", "/SYM64/", "__.SYMDEF") are skipped; thin archives are refused.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "binary/byte_reader.hpp"

namespace cudatool {

struct ArchiveMember {
  std::string name;
  ByteReader data;  // the member's bytes, offsets in errors those of the archive
};

// Whether the bytes start with an ar archive's magic, a thin archive's ("!<thin>\n")
// included, so that read_ar_archive can say what it is.
bool is_ar_archive(std::span<const std::uint8_t> bytes);
// Throws InputError for a malformed archive, and for a thin one (its members are files of
// their own, named in it: "a thin archive ...: name the objects instead").
std::vector<ArchiveMember> read_ar_archive(const ByteReader& r);

}  // namespace cudatool
