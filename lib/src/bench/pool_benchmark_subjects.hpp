// Internal: the allocators the pool benchmark times, as "subjects": each makes a per-thread
// `Local` with alloc(size) -> Handle and release(Handle&) (which empties the handle), and
// end_batch() outside the timed part. The streams are the library's one Stream
// (device/stream.hpp).
#pragma once

#include <cuda.h>

#include <cstdlib>
#include <limits>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/memory/memory_pool.hpp"
#include "device/stream.hpp"
#include "driver/driver_api.hpp"

namespace cudatool::bench::detail {

template <class Allocator>
struct PoolSubject {
  MemoryPool<Allocator>* pool;
  const Context* context;  // made current on each thread (null for host)
  struct Local {
    using Handle = PooledAllocation<Allocator>;
    MemoryPool<Allocator>* pool;
    Handle alloc(std::size_t size) { return pool->allocate(size); }
    static void release(Handle& h) noexcept { h.free(); }
    void end_batch() {}
  };
  Local local() const {
    if (context) context->make_current();
    return Local{pool};
  }
};

struct MallocSubject {
  struct Local {
    using Handle = void*;
    Handle alloc(std::size_t size) {
      void* p = std::malloc(size);
      if (p == nullptr)
        throw MemoryError("malloc(" + std::to_string(size) + ") failed: out of host memory");
      return p;
    }
    static void release(Handle& h) noexcept {
      std::free(h);
      h = nullptr;
    }
    void end_batch() {}
  };
  Local local() const { return {}; }
};

struct RawDeviceSubject {
  const Context* context;
  struct Local {
    using Handle = CUdeviceptr;
    Handle alloc(std::size_t size) {
      CUdeviceptr p = 0;
      CUDATOOL_CU(cuMemAlloc, &p, size);
      return p;
    }
    static void release(Handle& h) noexcept {
      if (h) driver::api().cuMemFree(h);
      h = 0;
    }
    void end_batch() {}
  };
  Local local() const {
    context->make_current();
    return {};
  }
};

struct RawPinnedSubject {
  const Context* context;
  unsigned flags;
  struct Local {
    using Handle = void*;
    unsigned flags;
    Handle alloc(std::size_t size) {
      void* p = nullptr;
      CUDATOOL_CU(cuMemHostAlloc, &p, size, flags);
      return p;
    }
    static void release(Handle& h) noexcept {
      if (h) driver::api().cuMemFreeHost(h);
      h = nullptr;
    }
    void end_batch() {}
  };
  Local local() const {
    context->make_current();
    return Local{flags};
  }
};

struct StreamOrderedSubject {
  const Context* context;
  struct Local {
    using Handle = CUdeviceptr;
    explicit Local(CUcontext context) : stream(context) {}
    Local(Local&&) = default;
    ~Local() {
      if (stream.get()) driver::api().cuStreamSynchronize(stream.get());
    }
    cudatool::detail::Stream stream;
    Handle alloc(std::size_t size) {
      CUdeviceptr p = 0;
      CUDATOOL_CU(cuMemAllocAsync, &p, size, stream.get());
      return p;
    }
    void release(Handle& h) noexcept {
      if (h) driver::api().cuMemFreeAsync(h, stream.get());
      h = 0;
    }
    // Untimed: keeps the stream's queue from growing without bound.
    void end_batch() { stream.synchronize(); }
  };
  Local local() const {
    context->make_current();
    return Local(context->handle());
  }
};

// The driver's default memory pool of a device, with its release threshold raised for
// the run (so that it keeps its memory between frees) and restored, trimmed, after.
class DefaultPoolGuard {
 public:
  explicit DefaultPoolGuard(const Device& device) {
    CUDATOOL_CU(cuDeviceGetDefaultMemPool, &pool_, device.handle());
    cuuint64_t threshold = std::numeric_limits<cuuint64_t>::max();
    CUDATOOL_CU(cuMemPoolSetAttribute, pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
  }
  ~DefaultPoolGuard() {
    const auto& api = driver::api();
    cuuint64_t threshold = 0;
    api.cuMemPoolSetAttribute(pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold);
    api.cuMemPoolTrimTo(pool_, 0);
  }
  DefaultPoolGuard(const DefaultPoolGuard&) = delete;
  DefaultPoolGuard& operator=(const DefaultPoolGuard&) = delete;

 private:
  CUmemoryPool pool_ = nullptr;
};

}  // namespace cudatool::bench::detail
