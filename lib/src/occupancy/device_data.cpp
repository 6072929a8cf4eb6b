#include "cudatool/occupancy/device_data.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

// One row of share/architectures.json, as lib/CMakeLists.txt writes it out.
struct ArchitectureRow {
  const char* compute_capability;
  const char* family;
  int max_threads_per_block, warp_size, max_threads_per_multiprocessor,
      max_blocks_per_multiprocessor, registers_per_multiprocessor, registers_per_block,
      max_registers_per_thread, register_allocation_granularity;
  std::size_t shared_memory_per_multiprocessor, shared_memory_per_block,
      shared_memory_per_block_optin, reserved_shared_memory_per_block;
  int shared_memory_allocation_granularity, shared_memory_banks, cache_line_size;
  int sm_count;  // 0: no single part
  const char* sm_count_part;
};

constexpr ArchitectureRow kRows[] = {
#include "architecture_table.inc"
};

ComputeCapability parse_dotted(std::string_view text) {
  ComputeCapability cc{-1, -1};
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) return cc;
  const auto major = text.substr(0, dot), minor = text.substr(dot + 1);
  int a = -1, b = -1;
  auto r1 = std::from_chars(major.data(), major.data() + major.size(), a);
  auto r2 = std::from_chars(minor.data(), minor.data() + minor.size(), b);
  if (major.empty() || minor.size() != 1 || r1.ptr != major.data() + major.size() ||
      r2.ptr != minor.data() + minor.size() || r1.ec != std::errc() || r2.ec != std::errc())
    return cc;
  return {a, b};
}

std::vector<DeviceProperties> load_table() {
  std::vector<DeviceProperties> rows;
  for (const ArchitectureRow& row : kRows) {
    DeviceProperties p;
    p.compute_capability = parse_dotted(row.compute_capability);
    if (p.compute_capability.major < 0)
      throw Error(std::string("architecture table: bad compute_capability ") +
                  row.compute_capability);
    p.name = p.compute_capability.sm();
    p.family = row.family;
    p.max_threads_per_block = row.max_threads_per_block;
    p.warp_size = row.warp_size;
    p.max_threads_per_multiprocessor = row.max_threads_per_multiprocessor;
    p.max_blocks_per_multiprocessor = row.max_blocks_per_multiprocessor;
    p.registers_per_multiprocessor = row.registers_per_multiprocessor;
    p.registers_per_block = row.registers_per_block;
    p.max_registers_per_thread = row.max_registers_per_thread;
    p.register_allocation_granularity = row.register_allocation_granularity;
    p.shared_memory_per_multiprocessor = row.shared_memory_per_multiprocessor;
    p.shared_memory_per_block = row.shared_memory_per_block;
    p.shared_memory_per_block_optin = row.shared_memory_per_block_optin;
    p.reserved_shared_memory_per_block = row.reserved_shared_memory_per_block;
    p.shared_memory_allocation_granularity = row.shared_memory_allocation_granularity;
    p.shared_memory_banks = row.shared_memory_banks;
    p.cache_line_size = row.cache_line_size;
    if (row.sm_count > 0) {
      p.sm_count = row.sm_count;
      p.sm_count_part = row.sm_count_part;
    }
    rows.push_back(std::move(p));
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.compute_capability < b.compute_capability;
  });
  return rows;
}

const std::vector<DeviceProperties>& table() {
  static const std::vector<DeviceProperties> rows = load_table();
  return rows;
}

std::string known_list() {
  std::string list;
  for (const auto& row : table()) list += (list.empty() ? "" : ", ") + row.name;
  return list;
}

void check_positive(long long value, const char* field) {
  if (value <= 0)
    throw UsageError(std::string("device properties: ") + field + " must be positive (got " +
                     std::to_string(value) + ")");
}

bool valid_word_size(int word_size) {
  return word_size == 1 || word_size == 2 || word_size == 4 || word_size == 8 || word_size == 16;
}

}  // namespace

std::span<const DeviceProperties> known_architectures() {
  return table();
}

const DeviceProperties* find_architecture(ComputeCapability cc) {
  for (const auto& row : table())
    if (row.compute_capability == cc) return &row;
  return nullptr;
}

ComputeCapability parse_architecture(std::string_view text) {
  std::string name(text);
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) name.erase(0, 1);
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));

  ComputeCapability cc{-1, -1};
  std::string_view digits;
  if (name.starts_with("sm_"))
    digits = std::string_view(name).substr(3);
  else if (name.starts_with("compute_"))
    digits = std::string_view(name).substr(8);
  if (!digits.empty()) {
    // A family- or architecture-specific suffix ("sm_90a", "sm_100f") has the same limits.
    if (digits.back() == 'a' || digits.back() == 'f') digits.remove_suffix(1);
    int number = -1;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    if (digits.size() >= 2 && digits.size() <= 3 && r.ec == std::errc() &&
        r.ptr == digits.data() + digits.size())
      cc = {number / 10, number % 10};
  } else {
    cc = parse_dotted(name);
  }
  if (cc.major < 0)
    throw UsageError("unknown architecture " + quote_input(text) +
                     ": expected sm_XX, compute_XX or X.Y (known: " + known_list() + ")");
  if (!find_architecture(cc))
    throw UsageError("architecture " + quote_input(text) + " (compute capability " + cc.str() +
                     ") is not in cudatool's table (known: " + known_list() + ")");
  return cc;
}

DeviceData::DeviceData(DeviceProperties properties, DeviceDataOrigin origin)
    : properties_(std::move(properties)), origin_(origin) {
  const auto& p = properties_;
  check_positive(p.compute_capability.major, "compute_capability.major");
  check_positive(p.max_threads_per_block, "max_threads_per_block");
  check_positive(p.warp_size, "warp_size");
  check_positive(p.max_threads_per_multiprocessor, "max_threads_per_multiprocessor");
  check_positive(p.max_blocks_per_multiprocessor, "max_blocks_per_multiprocessor");
  check_positive(p.registers_per_multiprocessor, "registers_per_multiprocessor");
  check_positive(p.registers_per_block, "registers_per_block");
  check_positive(p.max_registers_per_thread, "max_registers_per_thread");
  check_positive(p.register_allocation_granularity, "register_allocation_granularity");
  check_positive(static_cast<long long>(p.shared_memory_per_multiprocessor),
                 "shared_memory_per_multiprocessor");
  check_positive(static_cast<long long>(p.shared_memory_per_block), "shared_memory_per_block");
  check_positive(static_cast<long long>(p.shared_memory_per_block_optin),
                 "shared_memory_per_block_optin");
  check_positive(p.shared_memory_allocation_granularity, "shared_memory_allocation_granularity");
  check_positive(p.shared_memory_banks, "shared_memory_banks");
  check_positive(p.cache_line_size, "cache_line_size");
  if (p.sm_count) check_positive(*p.sm_count, "sm_count");
  if (p.shared_memory_per_block_optin < p.shared_memory_per_block)
    throw UsageError("device properties: shared_memory_per_block_optin (" +
                     std::to_string(p.shared_memory_per_block_optin) +
                     ") is below shared_memory_per_block (" +
                     std::to_string(p.shared_memory_per_block) + ")");
}

DeviceData::DeviceData(std::string_view architecture)
    : DeviceData(*find_architecture(parse_architecture(architecture)),
                 DeviceDataOrigin::architecture_table) {}

DeviceData::DeviceData(const Device& device) : origin_(DeviceDataOrigin::device) {
  const ComputeCapability cc = device.compute_capability();
  const DeviceProperties* row = find_architecture(cc);
  if (!row)
    throw RequirementError(
        "device " + std::to_string(device.ordinal()) + " (" + device.name() +
        ") has compute capability " + cc.str() +
        ", which cudatool's architecture table does not know (known: " + known_list() + ")");
  // What the driver does not report (granularities, the per-thread register limit, banks)
  // is a property of the architecture.
  DeviceProperties p = *row;
  auto attr = [&](CUdevice_attribute a) { return device.get_attribute(a); };
  p.name = device.name();
  p.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p.warp_size = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  p.max_threads_per_multiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  p.max_blocks_per_multiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
  p.registers_per_multiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  p.registers_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  p.shared_memory_per_multiprocessor =
      static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  p.shared_memory_per_block =
      static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK));
  p.shared_memory_per_block_optin =
      static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN));
  p.reserved_shared_memory_per_block =
      static_cast<std::size_t>(attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK));
  p.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  p.sm_count_part = p.name;
  *this = DeviceData(std::move(p), DeviceDataOrigin::device);
}

void DeviceData::set_sm_count(int sm_count) {
  if (sm_count <= 0)
    throw UsageError("SM count " + std::to_string(sm_count) + ": must be at least 1");
  properties_.sm_count = sm_count;
  properties_.sm_count_part = "given";
}

int DeviceData::align_bytes(int word_size) const {
  if (!valid_word_size(word_size))
    throw UsageError("no coalesced alignment for words of " + std::to_string(word_size) +
                     " bytes (global memory words are 1, 2, 4, 8 or 16 bytes)");
  return std::min(properties_.warp_size * word_size, properties_.cache_line_size);
}

std::size_t DeviceData::align(std::size_t bytes, int word_size) const {
  const auto unit = static_cast<std::size_t>(align_bytes(word_size));
  return (bytes + unit - 1) / unit * unit;
}

int DeviceData::align_words(int word_size) const {
  const int bytes = align_bytes(word_size);
  if (bytes % word_size != 0)
    throw Error("alignment of " + std::to_string(bytes) + " bytes is not a whole number of " +
                std::to_string(word_size) + "-byte words");
  return bytes / word_size;
}

std::size_t DeviceData::align_dtype(std::size_t elements, int dtype_size) const {
  const auto unit = static_cast<std::size_t>(align_words(dtype_size));
  return (elements + unit - 1) / unit * unit;
}

int DeviceData::make_valid_tex_channel_count(int size) {
  if (size < 1 || size > 4)
    throw UsageError("no texture has " + std::to_string(size) + " channels (1, 2 or 4)");
  return size == 3 ? 4 : size;
}

std::string_view origin_name(DeviceDataOrigin origin) {
  switch (origin) {
    case DeviceDataOrigin::architecture_table:
      return "architecture_table";
    case DeviceDataOrigin::device:
      return "device";
    case DeviceDataOrigin::custom:
      break;
  }
  return "custom";
}

void to_json(nlohmann::json& j, const DeviceProperties& p) {
  j = nlohmann::json{
      {"name", p.name},
      {"family", p.family},
      {"compute_capability", p.compute_capability.str()},
      {"max_threads_per_block", p.max_threads_per_block},
      {"warp_size", p.warp_size},
      {"max_threads_per_multiprocessor", p.max_threads_per_multiprocessor},
      {"max_blocks_per_multiprocessor", p.max_blocks_per_multiprocessor},
      {"registers_per_multiprocessor", p.registers_per_multiprocessor},
      {"registers_per_block", p.registers_per_block},
      {"max_registers_per_thread", p.max_registers_per_thread},
      {"register_allocation_granularity", p.register_allocation_granularity},
      {"shared_memory_per_multiprocessor", p.shared_memory_per_multiprocessor},
      {"shared_memory_per_block", p.shared_memory_per_block},
      {"shared_memory_per_block_optin", p.shared_memory_per_block_optin},
      {"reserved_shared_memory_per_block", p.reserved_shared_memory_per_block},
      {"shared_memory_allocation_granularity", p.shared_memory_allocation_granularity},
      {"shared_memory_banks", p.shared_memory_banks},
      {"cache_line_size", p.cache_line_size},
      {"sm_count", p.sm_count ? nlohmann::json(*p.sm_count) : nlohmann::json(nullptr)},
      {"sm_count_part", p.sm_count ? nlohmann::json(p.sm_count_part) : nlohmann::json(nullptr)},
  };
}

void to_json(nlohmann::json& j, const DeviceData& data) {
  to_json(j, data.properties());
  j["origin"] = origin_name(data.origin());
  // PyCUDA's names for the same values.
  j["max_threads"] = data.max_threads();
  j["warps_per_mp"] = data.warps_per_mp();
  j["thread_blocks_per_mp"] = data.thread_blocks_per_mp();
  j["registers"] = data.registers();
  j["shared_memory"] = data.shared_memory();
  j["smem_granularity"] = data.smem_granularity();
  j["smem_alloc_granularity"] = data.smem_alloc_granularity();
}

}  // namespace cudatool
