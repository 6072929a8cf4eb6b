// The CUBIN reader's internal entry points (the public read_cubin is in
// cudatool/binary/cubin.hpp): reading an image through a ByteReader, so that errors name the
// reader's source and offsets (kernel_scan.cpp), walking a .nv.info section, and the
// demangler and register rule the reader applies.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory_resource>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "binary/byte_reader.hpp"
#include "cudatool/binary/cubin.hpp"

namespace cudatool {

// demangle() (below) for the many images of one scan: a library holds each kernel once per
// architecture (libcublasLt.so.13: 31,574 mangled names, a third of them distinct), and
// __cxa_demangle costs about 20,000 instructions a name. Safe to share between threads; it
// holds every name it has seen until it is destroyed, in arenas freed at once (freeing
// libcublasLt's 18,000 pairs one by one took 2 ms after its scan).
class DemangleCache {
 public:
  std::string demangle(const std::string& name);

 private:
  struct Shard {
    std::mutex mutex;
    std::pmr::monotonic_buffer_resource arena{64 << 10};
    // mangled -> demangled, both text in `arena`
    std::pmr::unordered_map<std::string_view, std::string_view> names{&arena};
  };
  std::array<Shard, 16> shards_;  // chosen by the name's length, so that threads rarely wait
};

// read_cubin, with errors naming the reader's source and offsets; names demangled through
// `names` where given.
CubinInfo read_cubin_image(const ByteReader& image, DemangleCache* names = nullptr);

// Calls fn(attribute, format, value, payload) for every record of a .nv.info section:
// EIFMT_SVAL (4) records carry a payload, the others a value in the header. Throws through
// the reader for a record that runs past the section.
void for_each_nv_info_attribute(
    const ByteReader& section,
    const std::function<void(std::uint8_t attribute, std::uint8_t format, std::uint16_t value,
                             std::span<const std::uint8_t> payload)>& fn);

// abi::__cxa_demangle, or `name` unchanged when it is not a mangled C++ name. A static
// kernel's name under -rdc, __nv_static_<N>_<N characters naming the file>_<mangled name>,
// demangles as its mangled part does (as cu++filt shows it).
std::string demangle(const std::string& name);

// The register-limited block size on the target (see max_threads_per_block in
// cudatool/binary/cubin.hpp); 0 for more than 255.
int register_limited_block_size(int num_regs);

}  // namespace cudatool
