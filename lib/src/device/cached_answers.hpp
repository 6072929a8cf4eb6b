// Internal: Device's answers from the device cache (device_cache.cpp), where the cache may
// give them now (the live readings they depend on are unchanged); nullopt: ask the driver.
#pragma once

#include <cstdint>
#include <optional>

#include "cudatool/driver/handles.hpp"

namespace cudatool::detail {

struct CachedAttribute {
  bool rejected = false;  // the driver rejects it (the CUresult is `value`)
  int value = 0;
};
std::optional<CachedAttribute> cached_attribute(int ordinal, DeviceAttribute attribute);
std::optional<std::uint64_t> cached_total_memory(int ordinal);

}  // namespace cudatool::detail
