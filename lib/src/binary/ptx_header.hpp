// The head of a PTX file: its `.version` (the PTX ISA it is written in) and `.target` (the
// architecture it is for) directives, which come before any code (PTX ISA 9.0, section 11:
// "Each PTX module must begin with a .version directive, and no other .version directive is
// allowed anywhere else within the module"; .target follows it). Read from the first bytes
// of a PTX entry, untrusted: anything unexpected gives no value, never an error.
#pragma once

#include <optional>
#include <string_view>

#include "cudatool/base/arch.hpp"
#include "cudatool/binary/image_format.hpp"

namespace cudatool {

struct PtxHeader {
  std::optional<PtxVersion> version;  // `.version 9.0`
  // `.target sm_90a` as the virtual architecture compute_90a (the first name of the list;
  // a later `texmode_independent` or `debug` is ignored).
  std::optional<Arch> target;
};

// Reads the directives from `text` (the start of a PTX file; comments and blank lines
// before them are skipped). Stops at the first line that is neither.
PtxHeader read_ptx_header(std::string_view text);

}  // namespace cudatool
