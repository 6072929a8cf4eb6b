#include "binary/byte_reader.hpp"

#include <cstdio>

#include "cudatool/base/error.hpp"

namespace cudatool {

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

const std::string& ByteReader::no_source() {
  static const std::string none;
  return none;
}

void ByteReader::fail(std::uint64_t offset, const std::string& message) const {
  throw InputError(source() + ": " + message + " at offset " + hex(origin_ + offset));
}

void ByteReader::past_end(std::uint64_t offset, std::uint64_t length, std::string_view what) const {
  throw InputError(source() + ": " + std::string(what) + " at offset " + hex(origin_ + offset) +
                   " (" + std::to_string(length) + " bytes) runs past the end of its " +
                   (origin_ == 0 ? "data" : "enclosing range") + " (" +
                   hex(origin_ + bytes_.size()) + ")");
}

}  // namespace cudatool
