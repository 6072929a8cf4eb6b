#include "memory/buffers.hpp"

#include <exception>
#include <utility>

#include "device/current_context.hpp"
#include "driver/driver_api.hpp"

namespace cudatool::detail {

DeviceBuffer::DeviceBuffer(CUcontext context, std::size_t bytes)
    : context_(context), bytes_(bytes) {
  CurrentContext current(context_);
  CUDATOOL_CU(cuMemAlloc, &pointer_, bytes);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      pointer_(std::exchange(other.pointer_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    free();
    context_ = std::exchange(other.context_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    pointer_ = std::exchange(other.pointer_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  free();
}

void DeviceBuffer::free() noexcept {
  if (pointer_ == 0) return;
  // A failure here has nowhere to go (destructors); the driver reclaims at exit anyway.
  try {
    CurrentContext current(context_);
    driver::api().cuMemFree(pointer_);
  } catch (const std::exception&) {
  }
  pointer_ = 0;
}

PinnedBuffer::PinnedBuffer(CUcontext context, std::size_t bytes, unsigned flags)
    : context_(context), bytes_(bytes) {
  CurrentContext current(context_);
  CUDATOOL_CU(cuMemHostAlloc, &pointer_, bytes, flags);
}

PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      pointer_(std::exchange(other.pointer_, nullptr)) {}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& other) noexcept {
  if (this != &other) {
    free();
    context_ = std::exchange(other.context_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    pointer_ = std::exchange(other.pointer_, nullptr);
  }
  return *this;
}

PinnedBuffer::~PinnedBuffer() {
  free();
}

void PinnedBuffer::free() noexcept {
  if (pointer_ == nullptr) return;
  try {
    CurrentContext current(context_);
    driver::api().cuMemFreeHost(pointer_);
  } catch (const std::exception&) {
  }
  pointer_ = nullptr;
}

}  // namespace cudatool::detail
