#include "cudatool/device/context.hpp"

#include <utility>

#include "driver/driver_api.hpp"

namespace cudatool {

Context::Context(const Device& device) : device_(device) {
  CUDATOOL_CU(cuDevicePrimaryCtxRetain, &context_, device.handle());
  try {
    make_current();
  } catch (...) {
    release();
    throw;
  }
}

Context::Context(Context&& other) noexcept
    : device_(other.device_), context_(std::exchange(other.context_, nullptr)) {}

Context& Context::operator=(Context&& other) noexcept {
  if (this != &other) {
    release();
    device_ = other.device_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

Context::~Context() {
  release();
}

void Context::make_current() const {
  CUDATOOL_CU(cuCtxSetCurrent, context_);
}

void Context::synchronize() const {
  make_current();
  CUDATOOL_CU(cuCtxSynchronize);
}

void Context::release() noexcept {
  if (context_ == nullptr) return;
  // Errors here have nowhere to go (destructors); the driver reclaims at exit anyway.
  const auto& api = driver::api();
  CUcontext current = nullptr;
  if (api.cuCtxGetCurrent && api.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context_ &&
      api.cuCtxSetCurrent)
    api.cuCtxSetCurrent(nullptr);
  if (api.cuDevicePrimaryCtxRelease) api.cuDevicePrimaryCtxRelease(device_.handle());
  context_ = nullptr;
}

}  // namespace cudatool

#include "cudatool/base/error.hpp"
#include "cudatool/device/selection.hpp"

namespace cudatool {

Context make_default_context(const std::optional<std::string>& device_flag,
                             std::string_view flag_source) {
  const DeviceChoice choice =
      choose_device(SelectionInputs::from_environment(device_flag, std::string(flag_source)));
  if (choice.explicit_choice()) return Context(resolve_device(choice));
  std::string failures, call = "cuCtxCreate", code_name;
  int code = 999;  // CUDA_ERROR_UNKNOWN, should no attempt have carried a result
  for (const Device& device : Device::all()) {
    try {
      return Context(device);
    } catch (const Error& e) {
      if (e.code() != 0) {
        call = e.call();
        code = e.code();
        code_name = e.code_name();
      }
      failures += (failures.empty() ? "" : "; ") + std::string("device ") +
                  std::to_string(device.ordinal()) + ": " + e.what();
    }
  }
  // Every attempt was a driver call that failed: a CUDA error, with the last result.
  throw RuntimeError(call, code, code_name.empty() ? "CUDA_ERROR_UNKNOWN" : code_name,
                     "no device accepted a context: " + failures);
}

}  // namespace cudatool
