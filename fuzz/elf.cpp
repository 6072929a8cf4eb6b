// libFuzzer target: the ELF64 reader (section table, symbols), the CUBIN reader on top of
// it and the ar archive reader. Malformed input must end in UsageError, nothing else.
#include <cstddef>
#include <cstdint>
#include <span>

#include "binary/archive.hpp"
#include "binary/cubin_reader.hpp"
#include "binary/elf.hpp"
#include "cudatool/base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  const cudatool::ByteReader r(bytes, "fuzz");
  try {
    const cudatool::ElfFile elf(r);
    for (const auto& s : elf.sections()) (void)elf.contents(s);
    (void)elf.symbols();
  } catch (const cudatool::UsageError&) {
  }
  try {
    (void)cudatool::read_cubin_image(r);
  } catch (const cudatool::UsageError&) {
  }
  try {
    (void)cudatool::read_ar_archive(r);
  } catch (const cudatool::UsageError&) {
  }
  return 0;
}
