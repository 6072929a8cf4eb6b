// What the unit tests of the binary readers share: files of the nvcc-built test object
// (tests/CMakeLists.txt, CUDATOOL_KERNELS_DATA) and the message of a refusal.
#pragma once

#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "binary/byte_reader.hpp"
#include "binary/fatbin.hpp"
#include "cudatool/base/error.hpp"
#include "fatbin_builder.hpp"

namespace cudatool::testing {

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

inline std::string data_file(const std::string& name) {
  return std::string(CUDATOOL_KERNELS_DATA) + "/" + name;
}

// The uncompressed sm_90 CUBIN of the nvcc-built test object, or empty.
inline Bytes real_cubin() {
  const Bytes object = read_bytes(data_file("none.o"));
  if (object.empty()) return {};
  const ByteReader r(object, "none.o");
  for (const FatbinContainer& c : find_fatbin_containers(r, 0, r.size()))
    for (const FatbinEntry& e : c.entries)
      if (e.kind == 2 && e.arch.str() == "sm_90") return Bytes(e.payload.begin(), e.payload.end());
  return {};
}

// What `fn` throws as UsageError (InputError included), or "".
inline std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace cudatool::testing
