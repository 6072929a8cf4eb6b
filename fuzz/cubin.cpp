// libFuzzer harness: the offline CUBIN reader (lib/src/binary/cubin.cpp) on arbitrary
// bytes. A malformed image must be a UsageError ("not a CUBIN: ..."), nothing else; a
// well-formed one must give plausible resources.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "binary/cubin_reader.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/binary/cubin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const cudatool::CubinInfo info = cudatool::read_cubin(std::span(data, size));
    for (const auto& k : info.kernels) {
      if (k.num_regs < 0 || k.shared_size_bytes < 0 || k.local_size_bytes < 0 ||
          k.const_size_bytes < 0 || k.max_threads_per_block < 0 || k.num_barriers < 0)
        std::abort();
      (void)cudatool::demangle(k.name);
    }
  } catch (const cudatool::UsageError&) {
  }
  return 0;
}
