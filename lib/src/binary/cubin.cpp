#include "cudatool/binary/cubin.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "binary/cubin_reader.hpp"
#include "binary/elf.hpp"
#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

// NVIDIA's additions to ELF (facts measured on CUDA 13.0 CUBINs).
constexpr std::uint8_t kFunc = 2;               // STT_FUNC
constexpr std::uint8_t kEntryOther = 0x10;      // st_other bit of a CUDA entry point
constexpr std::uint16_t kUndefinedSection = 0;  // SHN_UNDEF
constexpr std::uint8_t kFormatSval = 4;         // EIFMT_SVAL: 16-bit size, then the payload
constexpr std::uint8_t kFormatBval = 2;         // EIFMT_BVAL: an 8-bit value in the header
constexpr std::uint8_t kAttrMaxThreads = 0x05;
constexpr std::uint8_t kAttrReqntid = 0x10;
constexpr std::uint8_t kAttrFrameSize = 0x11;
constexpr std::uint8_t kAttrMinStackSize = 0x12;
constexpr std::uint8_t kAttrMaxregCount = 0x1b;
constexpr std::uint8_t kAttrRegcount = 0x2f;
constexpr std::uint8_t kAttrCtaPerCluster = 0x3d;
constexpr std::uint8_t kAttrNumBarriers = 0x4c;
constexpr std::uint8_t kAttrCudaApiVersion = 0x37;
constexpr std::uint8_t kAttrAnnotations = 0x55;  // (u32 type, u32 offset) pairs
// The toolkits known to mark every spill (12.8's cuBLASLt 12.9 wheel and 13.0's ptxas do);
// from an older one, a kernel with a stack but no marks may still spill.
constexpr std::uint32_t kFirstApiVersionWithSpillMarks = 128;
constexpr std::uint32_t kAnnotationSpill = 1;  // "SpillRefill": a spill store or load
constexpr int kFirstSmOf128BitCode = 70;       // Volta on: 16-byte instructions
constexpr std::uint32_t kOpcodeStl = 0x387;    // bits 0-11 of a 128-bit instruction
constexpr std::uint32_t kOpcodeLdl = 0x983;
constexpr std::uint32_t kStackUnknown = 0xffffffff;  // nvlink: "cannot be statically determined"
constexpr int kReservedSharedPerBlock = 1024;        // cc 8.0+: 1 KiB reserved per block
constexpr int kFirstSmWithReserveInWindow = 90;      // sm_90+: laid out in .nv.shared.<k>
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kRegistersPerBlock = 65536;
constexpr int kRegisterGranularity = 256;  // registers allocated per warp in these units
constexpr int kSubPartitions = 4;

[[noreturn]] void malformed(const ByteReader& r, const std::string& why) {
  throw InputError((r.source().empty() ? std::string() : r.source() + ": ") +
                   "not a CUBIN: " + why);
}

// The attributes of one kernel gathered from .nv.info (by symbol index).
struct Attributes {
  std::optional<std::uint32_t> regcount, frame_size, min_stack_size;
};

// A little-endian 32-bit value at `b` (the caller has checked that 4 bytes are there).
std::uint32_t le32(const std::uint8_t* b) {
  return std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 |
         std::uint32_t(b[3]) << 24;
}

std::array<int, 3> dims(std::span<const std::uint8_t> payload) {
  std::array<int, 3> d{1, 1, 1};
  for (std::size_t i = 0; i < 3 && i * 4 + 4 <= payload.size(); ++i) {
    d[i] = static_cast<int>(std::min<std::uint32_t>(le32(payload.data() + i * 4), 0x7fffffff));
  }
  return d;
}

std::uint64_t product(const std::array<int, 3>& d) {
  return std::uint64_t(std::max(d[0], 1)) * std::uint64_t(std::max(d[1], 1)) *
         std::uint64_t(std::max(d[2], 1));
}

int clamp_int(std::uint64_t v) {
  return static_cast<int>(std::min<std::uint64_t>(v, 0x7fffffff));
}

struct Spills {
  int stores = 0, loads = 0;
};

// The spill bytes of a kernel from ptxas's marks (EIATTR_ANNOTATIONS) and its code: each
// marked instruction is an STL or LDL whose width code (bits 73-75: 0/1 8-bit, 2/3 16-bit, 4
// 32-bit, 5 64-bit, 6/7 128-bit) gives its bytes. Nothing where a mark is outside the code
// or on another instruction (an encoding this reader does not know).
std::optional<Spills> spill_bytes(std::span<const std::uint8_t> marks,
                                  std::span<const std::uint8_t> code) {
  constexpr int kWidth[8] = {1, 1, 2, 2, 4, 8, 16, 16};
  Spills spills;
  for (std::size_t p = 0; p + 8 <= marks.size(); p += 8) {
    if (le32(marks.data() + p) != kAnnotationSpill) continue;
    const std::uint64_t at = le32(marks.data() + p + 4);
    if (at % 16 != 0 || at + 16 > code.size()) return std::nullopt;
    const std::uint8_t* instruction = code.data() + at;
    const std::uint32_t opcode = (instruction[0] | std::uint32_t(instruction[1]) << 8) & 0xfff;
    const int width = kWidth[(instruction[9] >> 1) & 7];  // bits 73-75
    if (opcode == kOpcodeStl)
      spills.stores += width;
    else if (opcode == kOpcodeLdl)
      spills.loads += width;
    else
      return std::nullopt;
  }
  return spills;
}

}  // namespace

void for_each_nv_info_attribute(const ByteReader& data,
                                const std::function<void(std::uint8_t, std::uint8_t, std::uint16_t,
                                                         std::span<const std::uint8_t>)>& fn) {
  std::uint64_t p = 0;
  while (p + 4 <= data.size()) {
    const std::uint8_t format = data.u8(p, ".nv.info record format");
    const std::uint8_t attribute = data.u8(p + 1, ".nv.info record attribute");
    const std::uint16_t size = data.u16(p + 2, ".nv.info record size");
    p += 4;
    if (format != kFormatSval) {
      fn(attribute, format,
         static_cast<std::uint16_t>(format == kFormatBval ? (size & 0xff) : size), {});
      continue;
    }
    fn(attribute, format, size, data.bytes(p, size, ".nv.info attribute payload"));
    p += size;
  }
}

std::string demangle(const std::string& name) {
  constexpr std::string_view kStatic = "__nv_static_";
  if (name.rfind(kStatic, 0) == 0) {
    // __nv_static_<N>_<N characters>_<mangled name>
    std::size_t p = kStatic.size(), length = 0;
    while (p < name.size() && name[p] >= '0' && name[p] <= '9' && length < 100000)
      length = length * 10 + std::size_t(name[p++] - '0');
    if (p == kStatic.size() || p >= name.size() || name[p] != '_') return name;
    const std::size_t mangled = p + 1 + length + 1;
    if (mangled > name.size() || name[mangled - 1] != '_') return name;
    const std::string inner = name.substr(mangled);
    const std::string text = demangle(inner);
    return text == inner ? name : text;
  }
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

std::string DemangleCache::demangle(const std::string& name) {
  // Names that are not mangled come back as they are, at no cost worth keeping.
  if (name.rfind("_Z", 0) != 0 && name.rfind("__nv_static_", 0) != 0) return name;
  Shard& shard = shards_[name.size() % shards_.size()];
  {
    const std::lock_guard<std::mutex> lock(shard.mutex);
    if (const auto it = shard.names.find(name); it != shard.names.end())
      return std::string(it->second);
  }
  std::string text = cudatool::demangle(name);
  const std::lock_guard<std::mutex> lock(shard.mutex);
  if (shard.names.contains(name)) return text;  // another thread came first
  const auto keep = [&](std::string_view s) {
    char* bytes = static_cast<char*>(shard.arena.allocate(s.size(), 1));
    std::copy(s.begin(), s.end(), bytes);
    return std::string_view(bytes, s.size());
  };
  shard.names.emplace(keep(name), keep(text));
  return text;
}

int register_limited_block_size(int num_regs) {
  if (num_regs <= 0) return kMaxThreadsPerBlock;
  if (num_regs > 255) return 0;
  const int per_warp =
      (num_regs * 32 + kRegisterGranularity - 1) / kRegisterGranularity * kRegisterGranularity;
  const int warps = kSubPartitions * (kRegistersPerBlock / kSubPartitions / per_warp);
  return std::min(kMaxThreadsPerBlock, warps * 32);
}

namespace {

// The image parsed as ELF, and one of NVIDIA's with sections; InputError("not a CUBIN: ...")
// otherwise.
ElfFile open_cubin(const ByteReader& r) {
  if (r.size() < 64 || !ElfFile::is_elf(r.all())) malformed(r, "no ELF header");
  std::optional<ElfFile> parsed;
  try {
    parsed.emplace(r);
  } catch (const InputError& e) {
    malformed(r, e.what());
  }
  if (parsed->machine() != kElfMachineCuda) malformed(r, "ELF machine is not EM_CUDA");
  if (parsed->sections().empty()) malformed(r, "no section header table");
  return std::move(*parsed);
}

// ABI version 8 and later keep the SM number in bits 8-15, earlier ones in bits 0-7.
ComputeCapability cubin_compute_capability(const ElfFile& elf) {
  const int sm = elf.abi_version() >= 8 ? int((elf.flags() >> 8) & 0xff) : int(elf.flags() & 0xff);
  return {sm / 10, sm % 10};
}

// The program header table (which loaded CUBINs have, after the section headers) must be
// there too: a truncated image is refused whole.
void check_program_headers(const ByteReader& r) {
  const std::uint64_t phoff = r.u64(32, "e_phoff");
  const std::uint64_t phentsize = r.u16(54, "e_phentsize");
  const std::uint64_t phnum = r.u16(56, "e_phnum");
  if (phnum > 0) {
    if (!r.contains(phoff, phentsize * phnum)) malformed(r, "program header table past the end");
  }
}

// A kernel's own sections.
struct KernelSections {
  const ElfSection* text = nullptr;    // .text.<kernel>
  const ElfSection* info = nullptr;    // .nv.info.<kernel>
  const ElfSection* shared = nullptr;  // .nv.shared.<kernel>
};

// The sections looked up by name: the module's own two, and each kernel's three, kept by
// the kernel's name (the section name less its prefix), so that a kernel is one lookup and
// no name is put together to look for. sm_100+ CUBINs carry .nv.merc.* copies of sections
// (for another code generator); only the first occurrence of each name counts, and
// .nv.merc.* names never match the names looked up here, so nothing is counted twice.
class SectionIndex {
 public:
  explicit SectionIndex(const ElfFile& elf) {
    by_kernel_.reserve(elf.sections().size() / 2);
    for (const ElfSection& s : elf.sections()) {
      const auto first = [&](const ElfSection*& slot) {
        if (!slot) slot = &s;
      };
      const std::string_view name = s.name;
      if (name.starts_with(".text."))
        first(by_kernel_[name.substr(6)].text);
      else if (name.starts_with(".nv.info."))
        first(by_kernel_[name.substr(9)].info);
      else if (name.starts_with(".nv.shared."))
        first(by_kernel_[name.substr(11)].shared);
      else if (name == ".nv.info")
        first(module_info_);
      else if (name == ".nv.constant3")
        first(constant3_);
    }
  }
  SectionIndex(const SectionIndex&) = delete;
  SectionIndex& operator=(const SectionIndex&) = delete;

  const ElfSection* module_info() const { return module_info_; }  // .nv.info
  const ElfSection* constant3() const { return constant3_; }      // .nv.constant3
  KernelSections kernel(std::string_view name) const {
    const auto found = by_kernel_.find(name);
    return found == by_kernel_.end() ? KernelSections{} : found->second;
  }

 private:
  const ElfSection* module_info_ = nullptr;
  const ElfSection* constant3_ = nullptr;
  // Its nodes come from a buffer in the object, on the reader's stack (and from the heap,
  // in blocks, past it): one malloc and free per node were most of the reader's
  // allocations.
  std::array<std::byte, 16384> node_space_;
  std::pmr::monotonic_buffer_resource nodes_{node_space_.data(), node_space_.size()};
  std::pmr::unordered_map<std::string_view, KernelSections> by_kernel_{&nodes_};
};

std::vector<ElfSymbol> read_symbols(const ByteReader& r, const ElfFile& elf) {
  std::vector<ElfSymbol> symbols;
  try {
    symbols = elf.symbols();
  } catch (const InputError& e) {
    malformed(r, e.what());
  }
  if (symbols.empty()) malformed(r, "no symbol table");
  return symbols;
}

// The module's .nv.info attributes of each kernel, by symbol index; attributes of symbols
// past the table are of no kernel.
std::vector<Attributes> module_attributes(const ElfFile& elf, const ElfSection* module_info,
                                          std::size_t symbol_count) {
  std::vector<Attributes> by_symbol(symbol_count);
  if (!module_info) return by_symbol;
  for_each_nv_info_attribute(
      elf.section_reader(*module_info), [&](std::uint8_t attribute, std::uint8_t, std::uint16_t,
                                            std::span<const std::uint8_t> payload) {
        if (payload.size() < 8) return;
        // (symbol, value), little-endian, inside the payload's 8 bytes or more.
        const std::uint32_t symbol = le32(payload.data()), value = le32(payload.data() + 4);
        if (symbol >= by_symbol.size()) return;
        if (attribute == kAttrRegcount) by_symbol[symbol].regcount = value;
        if (attribute == kAttrFrameSize) by_symbol[symbol].frame_size = value;
        if (attribute == kAttrMinStackSize) by_symbol[symbol].min_stack_size = value;
      });
  return by_symbol;
}

// What is known of the image before its kernels are read.
struct ImageFacts {
  bool relocatable = false;
  int sm = 0;                      // the architecture's number: 90 for sm_90
  bool reserve_in_window = false;  // static shared memory includes the 1 KiB reserve
  int const_size = 0;              // .nv.constant3's size, every kernel's
};

bool is_kernel(const ElfSymbol& sym) {
  // Not an undefined one: a kernel of another image, launched here.
  return (sym.info & 0xf) == kFunc && (sym.other & kEntryOther) != 0 &&
         sym.section != kUndefinedSection;
}

// The kernel's register count: the module's EIATTR_REGCOUNT, else (hand-written kernels)
// the top byte of .text.<kernel>'s sh_info.
std::uint32_t register_count(const ByteReader& r, const std::string& name,
                             const Attributes& attributes, const KernelSections& own) {
  if (attributes.regcount) return *attributes.regcount;
  if (own.text) return own.text->info >> 24;
  malformed(r, "kernel " + name + " has no EIATTR_REGCOUNT");
}

// What a kernel's own .nv.info.<kernel> says: its bounds and barriers, where ptxas marked
// its spills, and the CUDA API version it was built for.
struct KernelInfo {
  KernelBounds bounds;
  int num_barriers = 0;
  std::optional<std::span<const std::uint8_t>> spill_marks;
  std::uint32_t api_version = 0;
};

KernelInfo read_kernel_info(const ElfFile& elf, const ElfSection* section) {
  KernelInfo k;
  if (!section) return k;
  for_each_nv_info_attribute(elf.section_reader(*section),
                             [&](std::uint8_t attribute, std::uint8_t, std::uint16_t value,
                                 std::span<const std::uint8_t> payload) {
                               switch (attribute) {
                                 case kAttrMaxThreads:
                                   if (!payload.empty())
                                     k.bounds.max_threads = clamp_int(product(dims(payload)));
                                   break;
                                 case kAttrReqntid:
                                   if (!payload.empty()) k.bounds.reqntid = dims(payload);
                                   break;
                                 case kAttrCtaPerCluster:
                                   if (!payload.empty()) k.bounds.cluster = dims(payload);
                                   break;
                                 case kAttrMaxregCount:
                                   if (payload.empty()) k.bounds.max_registers = value;
                                   break;
                                 case kAttrNumBarriers:
                                   if (payload.empty()) k.num_barriers = value;
                                   break;
                                 case kAttrAnnotations:
                                   k.spill_marks = payload;
                                   break;
                                 case kAttrCudaApiVersion:
                                   if (payload.size() >= 4) k.api_version = le32(payload.data());
                                   break;
                                 default:
                                   break;
                               }
                             });
  return k;
}

// The kernel's stack (local memory per thread). A relocatable (-dc) CUBIN has no stack
// size yet: the device linker computes it.
void set_stack(KernelResources& k, const Attributes& attributes, bool relocatable) {
  if (attributes.min_stack_size == kStackUnknown) {
    k.stack_unknown = true;
    k.local_size_bytes = 0;
  } else {
    k.local_size_bytes = clamp_int(
        attributes.min_stack_size.value_or(relocatable ? 0 : attributes.frame_size.value_or(0)));
  }
}

// Static shared memory, less the reserve where the section includes it.
int shared_size(const ElfSection& shared, bool reserve_in_window) {
  std::uint64_t size = shared.size;
  if (reserve_in_window) size -= std::min<std::uint64_t>(size, kReservedSharedPerBlock);
  return clamp_int(size);
}

// The spill bytes: from ptxas's marks where the code's encoding is known; none where the
// kernel has no stack frame, or the toolkit marks every spill and marked none; else unknown.
void set_spills(KernelResources& k, const KernelInfo& info, std::span<const std::uint8_t> code,
                const Attributes& attributes, int sm) {
  if (info.spill_marks && sm >= kFirstSmOf128BitCode) {
    if (const auto spills = spill_bytes(*info.spill_marks, code)) {
      k.spill_store_bytes = spills->stores;
      k.spill_load_bytes = spills->loads;
    }
  } else if (!info.spill_marks && ((k.local_size_bytes == 0 && !k.stack_unknown &&
                                    attributes.frame_size.value_or(0) == 0) ||
                                   info.api_version >= kFirstApiVersionWithSpillMarks)) {
    k.spill_store_bytes = k.spill_load_bytes = 0;
  }
}

// The register-limited block size, within the kernel's __launch_bounds__. A required block
// size (EIATTR_REQNTID, __block_size__) is not a bound here: the H100 driver reports 1024
// for a __block_size__((64, 1, 1)) kernel of 8 registers. It is kept in bounds.reqntid,
// which occupancy_for_kernel applies.
int max_threads_per_block(int num_regs, const KernelBounds& bounds) {
  std::uint64_t threads = static_cast<std::uint64_t>(register_limited_block_size(num_regs));
  if (bounds.max_threads) threads = std::min<std::uint64_t>(threads, *bounds.max_threads);
  return static_cast<int>(threads);
}

}  // namespace

CubinInfo read_cubin(std::span<const std::uint8_t> image) {
  return read_cubin_image(ByteReader(image, ""));
}

CubinInfo read_cubin_image(const ByteReader& r, DemangleCache* names) {
  const ElfFile elf = open_cubin(r);
  CubinInfo info;
  info.arch.cc = cubin_compute_capability(elf);
  check_program_headers(r);
  const SectionIndex sections(elf);
  const std::vector<ElfSymbol> symbols = read_symbols(r, elf);
  const std::vector<Attributes> by_symbol =
      module_attributes(elf, sections.module_info(), symbols.size());

  info.relocatable = elf.type() == kElfRelocatable;
  ImageFacts image;
  image.relocatable = info.relocatable;
  image.sm = info.arch.number();
  image.reserve_in_window = !info.relocatable && image.sm >= kFirstSmWithReserveInWindow;
  if (const ElfSection* constant3 = sections.constant3())
    image.const_size = clamp_int(constant3->size);

  const auto kernels =
      static_cast<std::size_t>(std::count_if(symbols.begin(), symbols.end(), is_kernel));
  info.kernels.reserve(kernels);
  info.bounds.reserve(kernels);
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    const ElfSymbol& sym = symbols[i];
    if (!is_kernel(sym)) continue;
    KernelResources k;
    k.name = std::string(sym.name);
    k.demangled = names ? names->demangle(k.name) : demangle(k.name);
    const Attributes& attributes = by_symbol[i];
    const KernelSections own = sections.kernel(sym.name);
    const std::uint32_t regs = register_count(r, k.name, attributes, own);
    const KernelInfo kernel_info = read_kernel_info(elf, own.info);
    k.num_barriers = kernel_info.num_barriers;
    k.num_regs = clamp_int(regs);
    set_stack(k, attributes, image.relocatable);
    if (own.shared) k.shared_size_bytes = shared_size(*own.shared, image.reserve_in_window);
    k.const_size_bytes = image.const_size;
    std::span<const std::uint8_t> code;
    if (own.text && own.text->has_contents()) {
      code = elf.section_reader(*own.text).all();
      k.code_size_bytes = code.size();
    }
    set_spills(k, kernel_info, code, attributes, image.sm);
    k.max_threads_per_block = max_threads_per_block(k.num_regs, kernel_info.bounds);
    info.kernels.push_back(std::move(k));
    info.bounds.push_back(kernel_info.bounds);
  }
  return info;
}

}  // namespace cudatool
