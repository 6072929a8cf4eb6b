// Internal: the library's one owned device buffer and page-locked host buffer
// (lib/README.md), for engines that time copies (check). Each is move-only RAII, allocated
// and freed in its context whatever context the calling thread has current.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace cudatool::detail {

// Device memory (cuMemAlloc).
class DeviceBuffer {
 public:
  DeviceBuffer(CUcontext context, std::size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  CUdeviceptr get() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void free() noexcept;
  CUcontext context_ = nullptr;
  std::size_t bytes_ = 0;
  CUdeviceptr pointer_ = 0;
};

// Page-locked host memory (cuMemHostAlloc with `flags`).
class PinnedBuffer {
 public:
  PinnedBuffer(CUcontext context, std::size_t bytes, unsigned flags = 0);
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();

  void* get() const { return pointer_; }
  std::uint32_t* words() const { return static_cast<std::uint32_t*>(pointer_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void free() noexcept;
  CUcontext context_ = nullptr;
  std::size_t bytes_ = 0;
  void* pointer_ = nullptr;
};

}  // namespace cudatool::detail
