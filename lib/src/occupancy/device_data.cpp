#include "cudatool/occupancy/device_data.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <iterator>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "device/cuda_attribute.hpp"

namespace cudatool {
namespace {

// A numeric column of the architecture table: its name and the DeviceProperties member it
// fills. The list is lib/CMakeLists.txt's, written out once (architecture_columns.inc).
struct Column {
  constexpr Column(std::string_view column, int DeviceProperties::*member)
      : name(column), int_member(member) {}
  constexpr Column(std::string_view column, std::size_t DeviceProperties::*member)
      : name(column), size_member(member) {}
  std::string_view name;
  int DeviceProperties::*int_member = nullptr;
  std::size_t DeviceProperties::*size_member = nullptr;
};

constexpr Column kColumnMembers[] = {
#include "architecture_columns.inc"
};
constexpr std::size_t kColumnCount = std::size(kColumnMembers);

// The numeric columns' names, in the table's order.
constexpr std::array<std::string_view, kColumnCount> kColumns = [] {
  std::array<std::string_view, kColumnCount> names{};
  for (std::size_t i = 0; i < kColumnCount; ++i) names[i] = kColumnMembers[i].name;
  return names;
}();

// One row of share/architectures.json, as lib/CMakeLists.txt writes it out.
struct ArchitectureRow {
  const char* compute_capability;
  const char* family;
  std::size_t values[kColumnCount];  // in kColumns' order; 0 where the table says null
  int sm_count;                      // 0: no single part
  const char* sm_count_part;
  const char* unknown_fields;  // "warp_size,max_threads_per_multiprocessor": null in the table
  const char* unknown_reason;
  const char* former_compute_capabilities;  // "10.1"
};

// What occupancy (cuda_occupancy.h, the input checks and the sweeps) reads.
constexpr std::string_view kOccupancyInputs[] = {
    "max_threads_per_block",
    "warp_size",
    "max_threads_per_multiprocessor",
    "max_blocks_per_multiprocessor",
    "registers_per_multiprocessor",
    "registers_per_block",
    "max_registers_per_thread",
    "register_allocation_granularity",
    "shared_memory_per_multiprocessor",
    "shared_memory_per_block",
    "shared_memory_per_block_optin",
    "reserved_shared_memory_per_block",
    "shared_memory_allocation_granularity",
};

// The columns a live device's driver reports (DeviceData(const Device&)).
constexpr std::string_view kDriverColumns[] = {
    "max_threads_per_block",
    "warp_size",
    "max_threads_per_multiprocessor",
    "max_blocks_per_multiprocessor",
    "registers_per_multiprocessor",
    "registers_per_block",
    "shared_memory_per_multiprocessor",
    "shared_memory_per_block",
    "shared_memory_per_block_optin",
    "reserved_shared_memory_per_block",
};

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> items;
  while (!text.empty()) {
    const auto comma = text.find(',');
    items.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return items;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

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
    for (std::size_t i = 0; i < kColumnCount; ++i) {
      const Column& column = kColumnMembers[i];
      if (column.int_member)
        p.*column.int_member = static_cast<int>(row.values[i]);
      else
        p.*column.size_member = row.values[i];
    }
    if (row.sm_count > 0) {
      p.sm_count = row.sm_count;
      p.sm_count_part = row.sm_count_part;
    }
    p.unknown_fields = split_list(row.unknown_fields);
    p.unknown_reason = row.unknown_reason;
    for (const auto& former : split_list(row.former_compute_capabilities)) {
      const ComputeCapability cc = parse_dotted(former);
      if (cc.major < 0) throw Error("architecture table: bad former compute capability " + former);
      p.former_compute_capabilities.push_back(cc);
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

void check_positive_value(long long value, const char* field) {
  if (value <= 0)
    throw UsageError(std::string("device properties: ") + field + " must be positive (got " +
                     std::to_string(value) + ")");
}

// The table row of `architecture` (DeviceData(const Arch&, ...) says what it refuses).
const DeviceProperties& table_row(const Arch& architecture, std::string_view source,
                                  std::string_view spelled) {
  // Outside the grammar (a malformed image's sm_5): the grammar's refusal, as for its name.
  const ComputeCapability& cc = architecture.cc;
  if (cc.major < 1 || cc.major > 99 || cc.minor < 0 || cc.minor > 9)
    (void)Arch::parse(architecture.str(), source);
  const DeviceProperties* row = find_architecture(cc);
  if (!row)
    throw UsageError(std::string(source) + " " +
                     quote_input(spelled.empty() ? architecture.str() : spelled) +
                     ": compute capability " + cc.str() +
                     " is not in cudatool's table (known: " + known_list() + ")");
  return *row;
}

bool valid_word_size(int word_size) {
  return word_size == 1 || word_size == 2 || word_size == 4 || word_size == 8 || word_size == 16;
}

}  // namespace

std::span<const DeviceProperties> known_architectures() {
  return table();
}

std::span<const std::string_view> architecture_columns() {
  return kColumns;
}

const DeviceProperties* find_architecture(ComputeCapability cc) {
  for (const auto& row : table())
    if (row.compute_capability == cc) return &row;
  for (const auto& row : table())
    for (const auto& former : row.former_compute_capabilities)
      if (former == cc) return &row;
  return nullptr;
}

DeviceData::DeviceData(DeviceProperties properties, DeviceDataOrigin origin)
    : properties_(std::move(properties)), origin_(origin) {
  const auto& p = properties_;
  for (const auto& field : p.unknown_fields)
    if (std::find(kColumns.begin(), kColumns.end(), field) == kColumns.end())
      throw UsageError("device properties: unknown_fields names \"" + field +
                       "\", which is no column of the architecture table");
  // A value the table does not know is exempt: it holds 0.
  auto check_positive = [&](long long value, const char* field) {
    if (!contains(p.unknown_fields, field)) check_positive_value(value, field);
  };
  check_positive_value(p.compute_capability.major, "compute_capability.major");
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
  if (p.sm_count) check_positive_value(*p.sm_count, "sm_count");
  if (knows("shared_memory_per_block_optin") && knows("shared_memory_per_block") &&
      p.shared_memory_per_block_optin < p.shared_memory_per_block)
    throw UsageError("device properties: shared_memory_per_block_optin (" +
                     std::to_string(p.shared_memory_per_block_optin) +
                     ") is below shared_memory_per_block (" +
                     std::to_string(p.shared_memory_per_block) + ")");
}

DeviceData::DeviceData(const Arch& architecture, std::string_view source, std::string_view spelled)
    : DeviceData(table_row(architecture, source, spelled), DeviceDataOrigin::architecture_table) {}

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
  auto attr = [&](CUdevice_attribute a) { return device.get_attribute(to_attribute(a)); };
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
  // The driver's values are known even where the table's are not.
  std::erase_if(p.unknown_fields, [](const std::string& field) {
    return std::find(std::begin(kDriverColumns), std::end(kDriverColumns), field) !=
           std::end(kDriverColumns);
  });
  if (p.unknown_fields.empty()) p.unknown_reason.clear();
  *this = DeviceData(std::move(p), DeviceDataOrigin::device);
}

bool DeviceData::knows(std::string_view field) const {
  return !contains(properties_.unknown_fields, field);
}

std::vector<std::string> DeviceData::unknown_occupancy_inputs() const {
  std::vector<std::string> unknown;
  for (const auto field : kOccupancyInputs)
    if (!knows(field)) unknown.emplace_back(field);
  return unknown;
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
  for (const char* field : {"warp_size", "cache_line_size"})
    if (!knows(field))
      throw RequirementError("no coalesced alignment for " + properties_.name +
                             ": cudatool's architecture table does not know its " + field + " (" +
                             properties_.unknown_reason + ")");
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

}  // namespace cudatool
