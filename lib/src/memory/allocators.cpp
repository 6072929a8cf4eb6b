#include "cudatool/memory/allocators.hpp"

#include <cstdlib>

#include "device/current_context.hpp"
#include "driver/driver_api.hpp"

namespace cudatool {

// The public header names cuMemHostAlloc's flags without cuda.h.
static_assert(PageLockedAllocator::kPortable == CU_MEMHOSTALLOC_PORTABLE);
static_assert(PageLockedAllocator::kDeviceMap == CU_MEMHOSTALLOC_DEVICEMAP);
static_assert(PageLockedAllocator::kWriteCombined == CU_MEMHOSTALLOC_WRITECOMBINED);

void* HostAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = std::malloc(bytes);
  if (p == nullptr)
    throw MemoryError("malloc(" + std::to_string(bytes) + ") failed: out of host memory");
  return p;
}

void HostAllocator::deallocate(void* pointer, std::size_t) noexcept {
  std::free(pointer);
}

namespace {

std::shared_ptr<const Context> require(std::shared_ptr<const Context> context, const char* who) {
  if (!context) throw LogicError(std::string(who) + ": no context");
  return context;
}

}  // namespace

DeviceAllocator::DeviceAllocator(const Device& device)
    : context_(std::make_shared<const Context>(device)) {}

DeviceAllocator::DeviceAllocator(std::shared_ptr<const Context> context)
    : context_(require(std::move(context), "DeviceAllocator")) {}

CUdeviceptr DeviceAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return 0;
  detail::CurrentContext current(context_->handle());
  CUdeviceptr p = 0;
  CUDATOOL_CU(cuMemAlloc, &p, bytes);
  return p;
}

void DeviceAllocator::deallocate(CUdeviceptr pointer, std::size_t) noexcept {
  if (pointer == 0) return;
  try {
    detail::CurrentContext current(context_->handle());
    CUDATOOL_CU_RESULT(cuMemFree, pointer);  // nothing to do about a failure here
  } catch (const std::exception&) {
    // Only reachable when the driver went away; the process is ending.
  }
}

std::string DeviceAllocator::describe() const {
  return "device memory (cuMemAlloc) on device " + std::to_string(context_->device().ordinal());
}

std::string format_host_alloc_flags(unsigned flags) {
  if (flags == 0) return "none";
  std::string text;
  // Appended piece by piece: GCC 12's -O3 warned (-Wrestrict, a false positive) about the
  // temporary strings of (text.empty() ? "" : "+") + std::string(name).
  const auto append = [&](const char* name) {
    if (!text.empty()) text += '+';
    text += name;
  };
  if (flags & CU_MEMHOSTALLOC_PORTABLE) append("portable");
  if (flags & CU_MEMHOSTALLOC_DEVICEMAP) append("devicemap");
  if (flags & CU_MEMHOSTALLOC_WRITECOMBINED) append("writecombined");
  if (flags & ~PageLockedAllocator::kValidFlags) append("unknown");
  return text;
}

namespace {

unsigned check_flags(unsigned flags) {
  if (flags & ~PageLockedAllocator::kValidFlags)
    throw LogicError("PageLockedAllocator: unknown cuMemHostAlloc flags " +
                     std::to_string(flags & ~PageLockedAllocator::kValidFlags));
  return flags;
}

}  // namespace

PageLockedAllocator::PageLockedAllocator(const Device& device, unsigned flags)
    : flags_(check_flags(flags)) {
  context_ = std::make_shared<const Context>(device);
}

PageLockedAllocator::PageLockedAllocator(std::shared_ptr<const Context> context, unsigned flags)
    : context_(require(std::move(context), "PageLockedAllocator")), flags_(check_flags(flags)) {}

void* PageLockedAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  detail::CurrentContext current(context_->handle());
  void* p = nullptr;
  CUDATOOL_CU(cuMemHostAlloc, &p, bytes, flags_);
  return p;
}

void PageLockedAllocator::deallocate(void* pointer, std::size_t) noexcept {
  if (pointer == nullptr) return;
  try {
    detail::CurrentContext current(context_->handle());
    CUDATOOL_CU_RESULT(cuMemFreeHost, pointer);
  } catch (const std::exception&) {
  }
}

std::string PageLockedAllocator::describe() const {
  return "page-locked host memory (cuMemHostAlloc, flags " + format_host_alloc_flags(flags_) +
         ") for device " + std::to_string(context_->device().ordinal());
}

}  // namespace cudatool
