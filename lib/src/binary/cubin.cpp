#include "cudatool/binary/cubin.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

// ELF64 constants (the System V gABI) and NVIDIA's additions.
constexpr std::uint16_t kMachineCuda = 190;  // EM_CUDA
constexpr std::uint32_t kSymtab = 2;         // SHT_SYMTAB
constexpr std::uint32_t kNobits = 8;         // SHT_NOBITS
constexpr std::uint8_t kFunc = 2;            // STT_FUNC
constexpr std::uint8_t kEntryOther = 0x10;   // st_other bit of a CUDA entry point
constexpr std::uint8_t kFormatSval = 4;      // EIFMT_SVAL: 16-bit size, then the payload
constexpr std::uint8_t kAttrMaxThreads = 0x05;
constexpr std::uint8_t kAttrReqntid = 0x10;
constexpr std::uint8_t kAttrFrameSize = 0x11;
constexpr std::uint8_t kAttrRegcount = 0x2f;
constexpr std::uint8_t kAttrNumBarriers = 0x4c;
constexpr int kReservedSharedPerBlock = 1024;  // cc 8.0+: 1 KiB reserved per block
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kRegistersPerBlock = 65536;
constexpr int kRegisterGranularity = 256;  // registers allocated per warp in these units
constexpr int kSubPartitions = 4;

[[noreturn]] void malformed(const std::string& why) {
  throw UsageError("not a CUBIN: " + why);
}

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  template <class T>
  T get(std::uint64_t offset) const {
    if (offset > bytes_.size() || bytes_.size() - offset < sizeof(T))
      malformed("truncated at offset " + std::to_string(offset));
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));  // little-endian host assumed
    return value;
  }
  std::span<const std::uint8_t> range(std::uint64_t offset, std::uint64_t size) const {
    if (offset > bytes_.size() || bytes_.size() - offset < size)
      malformed("section extends past the end of the file");
    return bytes_.subspan(offset, size);
  }
  std::string string_at(std::span<const std::uint8_t> table, std::uint32_t offset) const {
    if (offset >= table.size()) malformed("string offset out of range");
    const auto* begin = reinterpret_cast<const char*>(table.data()) + offset;
    const auto* end = static_cast<const char*>(std::memchr(begin, 0, table.size() - offset));
    if (end == nullptr) malformed("unterminated string");
    return std::string(begin, end);
  }

 private:
  std::span<const std::uint8_t> bytes_;
};

struct Section {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;
  std::uint64_t entsize = 0;
};

struct Symbol {
  std::string name;
  std::uint8_t info = 0;
  std::uint8_t other = 0;
  std::uint16_t section = 0;
};

// The attributes of one kernel gathered from .nv.info (by symbol index) and
// .nv.info.<kernel> (by section).
struct Attributes {
  std::optional<std::uint32_t> regcount, frame_size;
  std::optional<std::uint64_t> max_threads, reqntid;
};

std::uint64_t product(std::span<const std::uint8_t> payload) {
  std::uint64_t threads = 1;
  for (std::size_t i = 0; i + 4 <= payload.size() && i < 12; i += 4) {
    std::uint32_t v;
    std::memcpy(&v, payload.data() + i, 4);
    threads *= std::max<std::uint32_t>(v, 1);
  }
  return threads;
}

// Calls fn(attribute, payload) for every EIFMT_SVAL record of a .nv.info section, and
// value(attribute, v) for the others (EIFMT_BVAL, EIFMT_HVAL: the value is in the header).
template <class Fn, class ValueFn>
void for_each_attribute(std::span<const std::uint8_t> data, Fn fn, ValueFn value) {
  std::size_t p = 0;
  while (p + 4 <= data.size()) {
    const std::uint8_t format = data[p];
    const std::uint8_t attribute = data[p + 1];
    std::uint16_t size;
    std::memcpy(&size, data.data() + p + 2, 2);
    p += 4;
    if (format != kFormatSval) {
      value(attribute, static_cast<std::uint16_t>(format == 2 ? (size & 0xff) : size));
      continue;
    }
    if (size > data.size() - p) malformed(".nv.info attribute runs past its section");
    fn(attribute, data.subspan(p, size));
    p += size;
  }
}

}  // namespace

void to_json(nlohmann::json& j, const KernelResources& k) {
  j = nlohmann::json{{"name", k.name},
                     {"demangled", k.demangled},
                     {"num_regs", k.num_regs},
                     {"shared_size_bytes", k.shared_size_bytes},
                     {"local_size_bytes", k.local_size_bytes},
                     {"const_size_bytes", k.const_size_bytes},
                     {"max_threads_per_block", k.max_threads_per_block},
                     {"num_barriers", k.num_barriers}};
}

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

int register_limited_block_size(int num_regs) {
  if (num_regs <= 0) return kMaxThreadsPerBlock;
  if (num_regs > 255) return 0;
  const int per_warp =
      (num_regs * 32 + kRegisterGranularity - 1) / kRegisterGranularity * kRegisterGranularity;
  const int warps = kSubPartitions * (kRegistersPerBlock / kSubPartitions / per_warp);
  return std::min(kMaxThreadsPerBlock, warps * 32);
}

CubinInfo read_cubin(std::span<const std::uint8_t> image) {
  const Reader r(image);
  if (image.size() < 64 || std::memcmp(image.data(),
                                       "\x7f"
                                       "ELF",
                                       4) != 0)
    malformed("no ELF header");
  if (image[4] != 2 || image[5] != 1) malformed("not a little-endian ELF64 file");
  if (r.get<std::uint16_t>(18) != kMachineCuda) malformed("ELF machine is not EM_CUDA");
  CubinInfo info;
  const auto flags = r.get<std::uint32_t>(48);
  // ABI version 8 and later keep the SM number in bits 8-15, earlier ones in bits 0-7.
  info.sm = image[8] >= 8 ? int((flags >> 8) & 0xff) : int(flags & 0xff);

  const auto shoff = r.get<std::uint64_t>(40);
  const auto shentsize = r.get<std::uint16_t>(58);
  const auto shnum = r.get<std::uint16_t>(60);
  const auto shstrndx = r.get<std::uint16_t>(62);
  if (shnum == 0 || shentsize < 64 || shstrndx >= shnum) malformed("bad section header table");
  std::vector<Section> sections(shnum);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t h = shoff + std::uint64_t(i) * shentsize;
    Section& s = sections[i];
    s.type = r.get<std::uint32_t>(h + 4);
    s.offset = r.get<std::uint64_t>(h + 24);
    s.size = r.get<std::uint64_t>(h + 32);
    s.link = r.get<std::uint32_t>(h + 40);
    s.info = r.get<std::uint32_t>(h + 44);
    s.entsize = r.get<std::uint64_t>(h + 56);
  }
  // The whole image must be there: every section with file contents, and the program
  // header table (which loaded CUBINs have, after the section headers).
  for (const Section& s : sections)
    if (s.type != kNobits) r.range(s.offset, s.size);
  const auto phoff = r.get<std::uint64_t>(32);
  const auto phentsize = r.get<std::uint16_t>(54);
  const auto phnum = r.get<std::uint16_t>(56);
  if (phnum > 0) r.range(phoff, std::uint64_t(phentsize) * phnum);
  const auto names = r.range(sections[shstrndx].offset, sections[shstrndx].size);
  std::map<std::string, const Section*> by_name;
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint64_t h = shoff + std::uint64_t(i) * shentsize;
    sections[i].name = r.string_at(names, r.get<std::uint32_t>(h));
    by_name[sections[i].name] = &sections[i];
  }

  const auto symtab = std::find_if(sections.begin(), sections.end(),
                                   [](const Section& s) { return s.type == kSymtab; });
  if (symtab == sections.end()) malformed("no symbol table");
  if (symtab->link >= shnum || symtab->entsize < 24) malformed("bad symbol table");
  const auto strings = r.range(sections[symtab->link].offset, sections[symtab->link].size);
  std::vector<Symbol> symbols(symtab->size / symtab->entsize);
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const std::uint64_t e = symtab->offset + i * symtab->entsize;
    symbols[i].name = r.string_at(strings, r.get<std::uint32_t>(e));
    symbols[i].info = r.get<std::uint8_t>(e + 4);
    symbols[i].other = r.get<std::uint8_t>(e + 5);
    symbols[i].section = r.get<std::uint16_t>(e + 6);
  }

  std::map<std::uint32_t, Attributes> by_symbol;
  if (auto it = by_name.find(".nv.info"); it != by_name.end()) {
    for_each_attribute(
        r.range(it->second->offset, it->second->size),
        [&](std::uint8_t attribute, std::span<const std::uint8_t> payload) {
          if (payload.size() < 8) return;
          std::uint32_t symbol, value;
          std::memcpy(&symbol, payload.data(), 4);
          std::memcpy(&value, payload.data() + 4, 4);
          if (attribute == kAttrRegcount) by_symbol[symbol].regcount = value;
          if (attribute == kAttrFrameSize) by_symbol[symbol].frame_size = value;
        },
        [](std::uint8_t, std::uint16_t) {});
  }

  // A size or count the file states, as an int: a value above INT_MAX is no real kernel's
  // (and would turn negative), so the image is malformed (found by fuzz/cubin.cpp).
  const auto to_int = [](std::uint64_t value, const std::string& what) {
    if (value > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      malformed(what + " " + std::to_string(value) + " is out of range");
    return static_cast<int>(value);
  };
  int const_size = 0;
  if (auto it = by_name.find(".nv.constant3"); it != by_name.end())
    const_size = to_int(it->second->size, ".nv.constant3 size");
  const bool reserved_in_window = by_name.count(".nv.shared.reserved.0") != 0;

  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const Symbol& sym = symbols[i];
    if ((sym.info & 0xf) != kFunc || (sym.other & kEntryOther) == 0) continue;
    KernelResources k;
    k.name = sym.name;
    k.demangled = demangle(sym.name);
    Attributes attributes = by_symbol[static_cast<std::uint32_t>(i)];
    if (!attributes.regcount)
      malformed("kernel " + quote_input(sym.name) + " has no EIATTR_REGCOUNT");
    if (auto it = by_name.find(".nv.info." + sym.name); it != by_name.end()) {
      for_each_attribute(
          r.range(it->second->offset, it->second->size),
          [&](std::uint8_t attribute, std::span<const std::uint8_t> payload) {
            if (attribute == kAttrMaxThreads) attributes.max_threads = product(payload);
            if (attribute == kAttrReqntid) attributes.reqntid = product(payload);
          },
          [&](std::uint8_t attribute, std::uint16_t value) {
            if (attribute == kAttrNumBarriers) k.num_barriers = value;
          });
    }
    k.num_regs = to_int(*attributes.regcount, "EIATTR_REGCOUNT");
    k.local_size_bytes = to_int(attributes.frame_size.value_or(0), "EIATTR_FRAME_SIZE");
    if (auto it = by_name.find(".nv.shared." + sym.name); it != by_name.end()) {
      std::uint64_t size = it->second->size;
      if (reserved_in_window) size -= std::min<std::uint64_t>(size, kReservedSharedPerBlock);
      k.shared_size_bytes = to_int(size, ".nv.shared size");
    }
    k.const_size_bytes = const_size;
    std::uint64_t threads = static_cast<std::uint64_t>(register_limited_block_size(k.num_regs));
    if (attributes.max_threads) threads = std::min(threads, *attributes.max_threads);
    if (attributes.reqntid) threads = std::min(threads, *attributes.reqntid);
    k.max_threads_per_block = static_cast<int>(threads);
    info.kernels.push_back(std::move(k));
  }
  return info;
}

}  // namespace cudatool
