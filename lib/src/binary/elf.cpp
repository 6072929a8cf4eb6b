#include "binary/elf.hpp"

#include <cstring>
#include <string>

namespace cudatool {

bool ElfFile::is_elf(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(),
                                          "\x7f"
                                          "ELF",
                                          4) == 0;
}

ElfFile::ElfFile(ByteReader reader) : reader_(std::move(reader)) {
  const ByteReader& r = reader_;
  const auto ident = r.bytes(0, 64, "ELF header");
  if (!is_elf(ident)) r.fail(0, "not an ELF file (no ELF magic)");
  if (ident[4] != 2) r.fail(4, "not a 64-bit ELF file (ELFCLASS " + std::to_string(ident[4]) + ")");
  if (ident[5] != 1) r.fail(5, "not a little-endian ELF file");
  abi_version_ = ident[8];
  type_ = r.u16(16, "e_type");
  machine_ = r.u16(18, "e_machine");
  flags_ = r.u32(48, "e_flags");
  const std::uint64_t shoff = r.u64(40, "e_shoff");
  const std::uint16_t shentsize = r.u16(58, "e_shentsize");
  std::uint64_t shnum = r.u16(60, "e_shnum");
  std::uint32_t shstrndx = r.u16(62, "e_shstrndx");
  if (shoff == 0) return;  // no section table (a stripped image): nothing to read
  if (shentsize < 64)
    r.fail(58, "section header size " + std::to_string(shentsize) + " is below 64");
  // Extended numbering: the real counts live in section header 0.
  if (shnum == 0) shnum = r.u64(shoff + 32, "section header 0 (extended count)");
  if (shstrndx == 0xffff) shstrndx = r.u32(shoff + 40, "section header 0 (extended index)");
  if (shnum > r.size() / shentsize)
    r.fail(60, "section count " + std::to_string(shnum) + " cannot fit in the file");
  // The whole table is checked here, so its fields are read without a check each.
  const std::uint8_t* const table =
      r.bytes(shoff, shnum * shentsize, "section header table").data();
  sections_.resize(static_cast<std::size_t>(shnum));
  std::vector<std::uint32_t> name_offsets(sections_.size());
  for (std::size_t i = 0; i < sections_.size(); ++i) {
    const std::uint8_t* const h = table + i * shentsize;
    ElfSection& s = sections_[i];
    name_offsets[i] = ByteReader::load_le<std::uint32_t>(h);  // sh_name
    s.type = ByteReader::load_le<std::uint32_t>(h + 4);
    s.flags = ByteReader::load_le<std::uint64_t>(h + 8);
    s.offset = ByteReader::load_le<std::uint64_t>(h + 24);
    s.size = ByteReader::load_le<std::uint64_t>(h + 32);
    s.link = ByteReader::load_le<std::uint32_t>(h + 40);
    s.info = ByteReader::load_le<std::uint32_t>(h + 44);
    s.entsize = ByteReader::load_le<std::uint64_t>(h + 56);
    if (s.has_contents() && !r.contains(s.offset, s.size))  // the message made only then
      r.past_end(s.offset, s.size, "section " + std::to_string(i) + "'s contents");
  }
  if (shstrndx >= sections_.size())
    r.fail(62, "section-name table index " + std::to_string(shstrndx) + " out of range");
  const ByteReader names = section_reader(sections_[shstrndx]);
  for (std::size_t i = 0; i < sections_.size(); ++i)
    if (i != 0 || name_offsets[i] != 0)
      sections_[i].name = names.c_string(name_offsets[i], "section name");
}

const ElfSection* ElfFile::find(std::string_view name) const {
  for (const ElfSection& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

std::span<const std::uint8_t> ElfFile::contents(const ElfSection& s) const {
  if (!s.has_contents()) return {};
  return reader_.bytes(s.offset, s.size, "section contents");
}

ByteReader ElfFile::section_reader(const ElfSection& s) const {
  if (!s.has_contents()) return reader_.part({}, s.offset);
  if (!reader_.contains(s.offset, s.size))  // the message made only then
    reader_.past_end(s.offset, s.size, "section " + std::string(s.name));
  return reader_.part(reader_.all().subspan(s.offset, s.size), s.offset);
}

std::vector<ElfSymbol> ElfFile::symbols() const {
  std::vector<ElfSymbol> symbols;
  const ElfSection* symtab = nullptr;
  for (const ElfSection& s : sections_)
    if (s.type == kElfSymtab) {
      symtab = &s;
      break;
    }
  if (symtab == nullptr) return symbols;
  const ByteReader& r = reader_;
  if (symtab->entsize < 24) r.fail(symtab->offset, "symbol table entry size below 24");
  if (symtab->link >= sections_.size())
    r.fail(symtab->offset, "symbol table's string table index out of range");
  const ByteReader strings = section_reader(sections_[symtab->link]);
  const ByteReader table = section_reader(*symtab);
  const std::uint64_t count = symtab->size / symtab->entsize;
  symbols.resize(static_cast<std::size_t>(count));
  // Every entry (entsize >= 24 bytes, count of them) lies inside the table.
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const std::uint8_t* const e = table.all().data() + i * symtab->entsize;
    ElfSymbol& sym = symbols[i];
    sym.name = strings.c_string(ByteReader::load_le<std::uint32_t>(e), "symbol name");  // st_name
    sym.info = e[4];
    sym.other = e[5];
    sym.section = ByteReader::load_le<std::uint16_t>(e + 6);
    sym.value = ByteReader::load_le<std::uint64_t>(e + 8);
    sym.size = ByteReader::load_le<std::uint64_t>(e + 16);
  }
  return symbols;
}

std::vector<std::string_view> ElfFile::needed_libraries() const {
  constexpr std::uint32_t kDynamic = 6;  // SHT_DYNAMIC
  constexpr std::uint64_t kNeeded = 1;   // DT_NEEDED
  std::vector<std::string_view> needed;
  for (const ElfSection& s : sections_) {
    if (s.type != kDynamic || !s.has_contents()) continue;
    if (s.link >= sections_.size())
      reader_.fail(s.offset, "dynamic section's string table index out of range");
    const ByteReader strings = section_reader(sections_[s.link]);
    const ByteReader table = section_reader(s);
    for (std::uint64_t p = 0; p + 16 <= table.size(); p += 16) {
      const std::uint64_t tag = table.u64(p, "dynamic tag");
      if (tag == 0) break;  // DT_NULL
      if (tag == kNeeded)
        needed.push_back(strings.c_string(table.u64(p + 8, "DT_NEEDED"), "DT_NEEDED name"));
    }
    break;
  }
  return needed;
}

}  // namespace cudatool
