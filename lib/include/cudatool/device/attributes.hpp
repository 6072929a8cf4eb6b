// The device attributes by name: every CUdevice_attribute enumerator of the toolkit's
// cuda.h, named PyCUDA's way (lower-case, without CU_DEVICE_ATTRIBUTE_). Generated from
// cuda.h by tools/gen_attribute_table.py; a test fails when cuda.h has an enumerator the
// table lacks. Deprecated enumerators that duplicate another's value ("Deprecated, use
// X") are aliases: accepted as names, never listed twice. Deprecated enumerators with a
// value of their own stay attributes (marked deprecated); the driver decides whether it
// answers them. CU_DEVICE_ATTRIBUTE_MAX is the enum's end marker and not an attribute.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/driver/handles.hpp"

namespace cudatool {

struct AttributeInfo {
  std::string_view name;        // "max_threads_per_block"
  DeviceAttribute attribute;    // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK's value
  std::string_view enumerator;  // "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"
  bool deprecated;
  std::string_view description;  // cuda.h's comment
};

struct AttributeAlias {
  std::string_view name;        // "shared_memory_per_block"
  std::string_view enumerator;  // "CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK"
  std::string_view target;      // "max_shared_memory_per_block"
};

// In enumerator order.
std::span<const AttributeInfo> device_attributes();
std::span<const AttributeAlias> device_attribute_aliases();

// Looks up a name (or alias, or the full enumerator name, case-insensitive).
const AttributeInfo* find_attribute(std::string_view name);

// Up to `limit` table names closest to `name` (edit distance, substrings first), for
// "did you mean" messages.
std::vector<std::string> suggest_attributes(std::string_view name, std::size_t limit = 3);

// find_attribute, or a UsageError: "unknown attribute 'foo' (did you mean: ...?)".
const AttributeInfo& attribute_by_name(std::string_view name);

}  // namespace cudatool
