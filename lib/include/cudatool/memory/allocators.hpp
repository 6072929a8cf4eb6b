// Allocators for MemoryPool (memory_pool.hpp), and the pools over them:
//   DeviceAllocator      cuMemAlloc / cuMemFree in a context
//   PageLockedAllocator  cuMemHostAlloc / cuMemFreeHost with the flags given (portable,
//                        device-mapped, write-combined)
//   HostAllocator        std::malloc / std::free (tests, and a baseline without a GPU)
// Each allocates a zero-byte request as a null pointer without asking anyone (PyOpenCL
// 2020.2 semantics), throws MemoryError when out of memory, and may be used from several
// threads at once. The CUDA allocators keep their context alive (shared) and make it
// current around each driver call where it is not, so blocks may be allocated and freed on
// any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "cudatool/device/context.hpp"
#include "cudatool/driver/handles.hpp"
#include "cudatool/memory/memory_pool.hpp"

namespace cudatool {

class HostAllocator {
 public:
  using pointer_type = void*;
  void* allocate(std::size_t bytes);
  void deallocate(void* pointer, std::size_t bytes) noexcept;
  std::string describe() const { return "host memory (malloc)"; }
};

class DeviceAllocator {
 public:
  using pointer_type = DevicePointer;  // CUdeviceptr
  // Retains `device`'s primary context (and makes it current on this thread).
  explicit DeviceAllocator(const Device& device);
  explicit DeviceAllocator(std::shared_ptr<const Context> context);

  DevicePointer allocate(std::size_t bytes);
  void deallocate(DevicePointer pointer, std::size_t bytes) noexcept;
  const Context& context() const { return *context_; }
  std::string describe() const;

 private:
  std::shared_ptr<const Context> context_;
};

// The cuMemHostAlloc flags: kPortable, kDeviceMap and kWriteCombined have the values of
// cuda.h's CU_MEMHOSTALLOC_PORTABLE, _DEVICEMAP and _WRITECOMBINED (checked where the
// library is built), so either spelling may be given.
class PageLockedAllocator {
 public:
  using pointer_type = void*;
  static constexpr unsigned kPortable = 0x01;
  static constexpr unsigned kDeviceMap = 0x02;
  static constexpr unsigned kWriteCombined = 0x04;
  static constexpr unsigned kValidFlags = kPortable | kDeviceMap | kWriteCombined;
  // Throws LogicError for flags other than the three above.
  explicit PageLockedAllocator(const Device& device, unsigned flags = 0);
  explicit PageLockedAllocator(std::shared_ptr<const Context> context, unsigned flags = 0);

  void* allocate(std::size_t bytes);
  void deallocate(void* pointer, std::size_t bytes) noexcept;
  unsigned flags() const { return flags_; }
  const Context& context() const { return *context_; }
  std::string describe() const;

 private:
  std::shared_ptr<const Context> context_;
  unsigned flags_ = 0;
};

// "portable+devicemap" ("none" for 0).
std::string format_host_alloc_flags(unsigned flags);

using DeviceMemoryPool = MemoryPool<DeviceAllocator>;
using PageLockedMemoryPool = MemoryPool<PageLockedAllocator>;
using HostMemoryPool = MemoryPool<HostAllocator>;
using PooledDeviceAllocation = PooledAllocation<DeviceAllocator>;
using PooledHostAllocation = PooledAllocation<PageLockedAllocator>;  // PyCUDA's name
using PooledMallocAllocation = PooledAllocation<HostAllocator>;

}  // namespace cudatool
