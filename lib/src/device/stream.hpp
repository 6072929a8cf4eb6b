// Internal: the library's one owned CUDA stream and event (lib/README.md). Each is
// move-only RAII; a stream remembers its context and is destroyed in it, so its owner may
// outlive a change of the thread's current context.
#pragma once

#include <cuda.h>

namespace cudatool::detail {

// A non-blocking stream (CU_STREAM_NON_BLOCKING: it does not wait for the legacy stream,
// so work on it must be ordered on it, cuMemsetD8Async rather than cuMemsetD8).
class Stream {
 public:
  // Created in `context`; the calling thread's current context is as it was afterwards.
  explicit Stream(CUcontext context);
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  CUstream get() const { return stream_; }
  CUcontext context() const { return context_; }
  void synchronize() const;

 private:
  void destroy() noexcept;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
};

// An event of the calling thread's current context, for timing work on a stream.
class Event {
 public:
  Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();

  CUevent get() const { return event_; }
  void record(const Stream& stream) const;
  // Milliseconds from `start` to this event, both recorded and complete.
  float elapsed_ms_since(const Event& start) const;

 private:
  CUevent event_ = nullptr;
};

}  // namespace cudatool::detail
