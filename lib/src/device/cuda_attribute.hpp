// Internal: a cuda.h CUdevice_attribute enumerator as the public headers' DeviceAttribute
// (cudatool/driver/handles.hpp), and back.
#pragma once

#include <cuda.h>

#include "cudatool/driver/handles.hpp"

namespace cudatool {

constexpr DeviceAttribute to_attribute(CUdevice_attribute attribute) {
  return static_cast<DeviceAttribute>(attribute);
}
constexpr CUdevice_attribute to_cu(DeviceAttribute attribute) {
  return static_cast<CUdevice_attribute>(attribute);
}

}  // namespace cudatool
