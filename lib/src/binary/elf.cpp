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
  r.bytes(shoff, shnum * shentsize, "section header table");
  sections_.resize(static_cast<std::size_t>(shnum));
  std::vector<std::uint32_t> name_offsets(sections_.size());
  for (std::size_t i = 0; i < sections_.size(); ++i) {
    const std::uint64_t h = shoff + i * shentsize;
    ElfSection& s = sections_[i];
    name_offsets[i] = r.u32(h, "sh_name");
    s.type = r.u32(h + 4, "sh_type");
    s.flags = r.u64(h + 8, "sh_flags");
    s.offset = r.u64(h + 24, "sh_offset");
    s.size = r.u64(h + 32, "sh_size");
    s.link = r.u32(h + 40, "sh_link");
    s.info = r.u32(h + 44, "sh_info");
    s.entsize = r.u64(h + 56, "sh_entsize");
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
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const std::uint64_t e = i * symtab->entsize;
    ElfSymbol& sym = symbols[i];
    sym.name = strings.c_string(table.u32(e, "st_name"), "symbol name");
    sym.info = table.u8(e + 4, "st_info");
    sym.other = table.u8(e + 5, "st_other");
    sym.section = table.u16(e + 6, "st_shndx");
    sym.value = table.u64(e + 8, "st_value");
    sym.size = table.u64(e + 16, "st_size");
  }
  return symbols;
}

}  // namespace cudatool
