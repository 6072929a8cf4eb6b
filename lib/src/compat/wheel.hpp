// Wheels (.whl) read as the zip archives they are, in memory, through libzip opened at run
// time (libzip.so.5 or .4, as libcuda is: cudatool links it not, and a machine without it
// is told so only when it names a wheel). Internal to compat/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cudatool::detail {

struct WheelMember {
  std::string name;  // "torch/lib/libtorch_cuda.so"
  std::uint64_t size = 0;
  bool executable = false;  // a Unix mode with an execute bit, where the zip records one
};

// Throws InputError for a file that is no readable zip archive; LibraryNotFoundError where
// libzip cannot be opened.
std::vector<WheelMember> list_wheel(const std::string& wheel);
// A member's bytes, whole. Throws InputError naming the wheel and member where it cannot be
// read, is corrupt, or declares more than 4 GiB.
std::vector<std::uint8_t> read_wheel_member(const std::string& wheel, const std::string& member);

}  // namespace cudatool::detail
