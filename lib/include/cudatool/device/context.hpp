// A device's primary context, retained for the lifetime of the object and made current
// on the calling thread (the runtime API shares the same context, as PyCUDA's
// make_default_context does not; sharing is what users of both want).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cudatool/device/device.hpp"
#include "cudatool/driver/handles.hpp"

namespace cudatool {

class Context {
 public:
  // Retains `device`'s primary context and makes it current on this thread.
  explicit Context(const Device& device);
  Context(Context&& other) noexcept;
  Context& operator=(Context&& other) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  ContextHandle handle() const { return context_; }  // CUcontext
  const Device& device() const { return device_; }
  void make_current() const;  // on the calling thread
  void synchronize() const;

 private:
  void release() noexcept;
  Device device_;
  ContextHandle context_ = nullptr;
};

}  // namespace cudatool

namespace cudatool {

// PyCUDA's make_default_context: the device chosen by the caller (`device_flag`, named
// `flag_source` in messages: cudatool's --device), CUDA_DEVICE or ~/.cuda-device when one of
// them is set; otherwise the first device, in order, whose context can be created (a device
// in exclusive mode held by another process is skipped).
Context make_default_context(const std::optional<std::string>& device_flag,
                             std::string_view flag_source);

}  // namespace cudatool
