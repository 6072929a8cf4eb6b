// The ELF64 reader under every binary cudatool reads (lib/src/binary/elf.cpp): the header
// fields and section table of a host ELF built in memory (fatbin_builder.hpp), every kind of
// damage refused as bad file contents (InputError) naming the offset, and a real CUBIN's
// symbols (the nvcc-built test object; skipped without nvcc).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "binary/byte_reader.hpp"
#include "binary/elf.hpp"
#include "binary_samples.hpp"
#include "cudatool/base/error.hpp"
#include "fatbin_builder.hpp"

namespace cudatool {
namespace {

using testing::Bytes;
using testing::bytes_of;
using testing::error_of;
using testing::host_elf;
using testing::put;
using testing::real_cubin;
using testing::SectionSpec;

Bytes two_sections() {
  return host_elf({SectionSpec{".text", 6, bytes_of("code")},
                   SectionSpec{".rodata", 2, bytes_of("read only")}});
}

// Where the section header table starts (e_shoff).
std::uint64_t section_table(const Bytes& b) {
  return ByteReader(b, "x").u64(40, "e_shoff");
}

TEST(ElfFile, ReadsTheHeaderAndEverySectionByName) {
  const Bytes b = two_sections();
  EXPECT_TRUE(ElfFile::is_elf(b));
  EXPECT_FALSE(
      ElfFile::is_elf(bytes_of("\x7f"
                               "EL")));
  const ElfFile elf(ByteReader(b, "lib.so"));
  EXPECT_EQ(elf.type(), 3);              // ET_DYN
  EXPECT_EQ(elf.machine(), 62);          // EM_X86_64
  ASSERT_EQ(elf.sections().size(), 4u);  // null, .text, .rodata, .shstrtab
  EXPECT_EQ(elf.sections()[0].name, "");
  const ElfSection* text = elf.find(".text");
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->flags & kElfExecutable, kElfExecutable);
  const auto code = elf.contents(*text);
  EXPECT_EQ(std::string(code.begin(), code.end()), "code");
  const ElfSection* rodata = elf.find(".rodata");
  ASSERT_NE(rodata, nullptr);
  EXPECT_EQ(elf.section_reader(*rodata).size(), 9u);
  EXPECT_EQ(elf.find(".nv_fatbin"), nullptr);
  // No symbol table, no dynamic section: nothing, not an error.
  EXPECT_TRUE(elf.symbols().empty());
  EXPECT_TRUE(elf.needed_libraries().empty());
}

// A stripped image without a section table is read as one without sections.
TEST(ElfFile, NoSectionTableIsNoSections) {
  Bytes b = two_sections();
  put<std::uint64_t>(b, 40, 0);
  EXPECT_TRUE(ElfFile(ByteReader(b, "lib.so")).sections().empty());
}

TEST(ElfFile, DamageIsAnInputErrorNamingTheFileAndOffset) {
  const auto refused = [](const Bytes& b) {
    return error_of([&] {
      try {
        ElfFile elf(ByteReader(b, "lib.so"));
      } catch (const InputError&) {
        throw;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "not an InputError: " << e.what();
      }
    });
  };
  const Bytes good = two_sections();
  const std::uint64_t shoff = section_table(good);

  EXPECT_EQ(refused(Bytes(good.begin(), good.begin() + 40)),
            "lib.so: ELF header at offset 0x0 (64 bytes) runs past the end of its data (0x28)");
  Bytes b = good;
  b[1] = 'X';
  EXPECT_EQ(refused(b), "lib.so: not an ELF file (no ELF magic) at offset 0x0");
  b = good;
  b[4] = 1;  // ELFCLASS32
  EXPECT_EQ(refused(b), "lib.so: not a 64-bit ELF file (ELFCLASS 1) at offset 0x4");
  b = good;
  b[5] = 2;  // big-endian
  EXPECT_EQ(refused(b), "lib.so: not a little-endian ELF file at offset 0x5");
  b = good;
  put<std::uint16_t>(b, 58, 40);  // e_shentsize
  EXPECT_EQ(refused(b), "lib.so: section header size 40 is below 64 at offset 0x3a");
  b = good;
  put<std::uint16_t>(b, 60, 60000);  // e_shnum
  EXPECT_EQ(refused(b), "lib.so: section count 60000 cannot fit in the file at offset 0x3c");
  b = good;
  put<std::uint64_t>(b, 40, good.size() - 64);  // the table runs off the end
  EXPECT_NE(refused(b).find("section header table at offset"), std::string::npos) << refused(b);
  b = good;
  put<std::uint16_t>(b, 62, 9);  // e_shstrndx
  EXPECT_EQ(refused(b), "lib.so: section-name table index 9 out of range at offset 0x3e");
  b = good;
  put<std::uint64_t>(b, shoff + 64 + 32, 1ull << 40);  // .text's size
  EXPECT_NE(refused(b).find("section 1's contents at offset"), std::string::npos) << refused(b);
  b = good;
  put<std::uint32_t>(b, shoff + 64, 1u << 30);  // .text's name offset
  EXPECT_NE(refused(b).find("section name"), std::string::npos) << refused(b);
  // A section without contents (SHT_NOBITS) may lie anywhere.
  b = good;
  put<std::uint32_t>(b, shoff + 64 + 4, kElfNobits);
  put<std::uint64_t>(b, shoff + 64 + 24, 1ull << 40);
  const ElfFile nobits(ByteReader(b, "lib.so"));
  EXPECT_TRUE(nobits.contents(*nobits.find(".text")).empty());
}

TEST(ElfFile, SymbolTablesAreCheckedBeforeTheyAreRead) {
  Bytes b = two_sections();
  const std::uint64_t shoff = section_table(b);
  // .rodata as a symbol table whose entries are too small, then whose strings are missing.
  put<std::uint32_t>(b, shoff + 2 * 64 + 4, kElfSymtab);
  put<std::uint64_t>(b, shoff + 2 * 64 + 56, 8);
  const ElfFile small(ByteReader(b, "lib.so"));
  EXPECT_THROW(small.symbols(), InputError);
  EXPECT_NE(error_of([&] { small.symbols(); }).find("symbol table entry size below 24"),
            std::string::npos);
  put<std::uint64_t>(b, shoff + 2 * 64 + 56, 24);
  put<std::uint32_t>(b, shoff + 2 * 64 + 40, 99);  // sh_link
  const ElfFile unlinked(ByteReader(b, "lib.so"));
  EXPECT_NE(error_of([&] { unlinked.symbols(); }).find("string table index out of range"),
            std::string::npos);
}

// A real CUBIN: EM_CUDA, its kernels among the symbols of its symbol table.
TEST(ElfFile, ARealCubinHasCudaMachineAndSymbols) {
  const Bytes cubin = real_cubin();
  if (cubin.empty()) GTEST_SKIP() << "nvcc was not found at configure time";
  const ElfFile elf(ByteReader(cubin, "none.o sm_90"));
  EXPECT_EQ(elf.machine(), kElfMachineCuda);
  const auto symbols = elf.symbols();
  ASSERT_FALSE(symbols.empty());
  bool kernel = false;
  for (const ElfSymbol& s : symbols) {
    std::string section = ".text.";
    section += s.name;
    kernel = kernel || elf.find(section) != nullptr;
  }
  EXPECT_TRUE(kernel) << "a symbol with its .text.<name> section";
}

}  // namespace
}  // namespace cudatool
