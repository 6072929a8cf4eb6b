#include "driver/driver_api.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudatool/base/text.hpp"
#include "driver/dynamic_library.hpp"

namespace cudatool::driver {
namespace {

struct Loaded {
  DynamicLibrary library;
  Api api;
};

std::string describe_visible_devices() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return "";
  return " (CUDA_VISIBLE_DEVICES=" + quote_input(visible) + ")";
}

Loaded load() {
  Loaded loaded;
  const char* override_path = std::getenv("CUDATOOL_LIBCUDA");
  const std::string candidate =
      override_path && *override_path ? std::string(override_path) : "libcuda.so.1";
  try {
    loaded.library = DynamicLibrary::open_first({candidate}, "CUDA driver not found");
  } catch (const LibraryNotFoundError& e) {
    // Keep the soname in the message: it is what a user searches for.
    throw LibraryNotFoundError(std::string("CUDA driver not found (") + printable(candidate) +
                                   "): " + std::string(e.what()).substr(23),
                               "libcuda.so.1");
  }
  loaded.api.library_path = candidate;
  // Each entry point by the exact symbol this build's cuda.h declares (cuDeviceTotalMem is
  // cuDeviceTotalMem_v2 there), so each has that declaration's ABI. cuGetProcAddress with
  // CUDA_VERSION was not: on an H100 (driver 580) cuCtxSynchronize resolved that way failed
  // with CUDA_ERROR_CONTEXT_IS_DESTROYED right after cuCtxSetCurrent, as if the
  // context-taking cuCtxSynchronize_v2 had been returned. A symbol the driver lacks stays
  // null and throws when called.
#define CUDATOOL_SYMBOL_NAME(name) #name
#define CUDATOOL_EXPANDED_NAME(name) CUDATOOL_SYMBOL_NAME(name)
#define CUDATOOL_RESOLVE(name)                                   \
  loaded.api.name = reinterpret_cast<decltype(loaded.api.name)>( \
      loaded.library.symbol(CUDATOOL_EXPANDED_NAME(name)));
  CUDATOOL_DRIVER_FUNCTIONS(CUDATOOL_RESOLVE)
#undef CUDATOOL_RESOLVE
#undef CUDATOOL_EXPANDED_NAME
#undef CUDATOOL_SYMBOL_NAME
  if (loaded.api.cuDriverGetVersion) loaded.api.cuDriverGetVersion(&loaded.api.driver_version);
  return loaded;
}

// Loading happens once; a failure is kept and rethrown, so every caller sees the same.
struct State {
  std::once_flag load_once;
  std::optional<Loaded> loaded;
  std::exception_ptr load_error;
  std::once_flag init_once;
  std::exception_ptr init_error;
  std::vector<std::string> start_environment;  // environ when cuInit was called
  std::atomic<bool> started{false};
};

// Never destroyed, so the library is never unloaded: unloading it at exit gains nothing
// and would leave what it allocated for itself unreachable (LeakSanitizer then reports
// NVRTC's own buffers).
State& state() {
  static State& s = *new State;
  return s;
}

}  // namespace

const Api& api() {
  State& s = state();
  std::call_once(s.load_once, [&] {
    try {
      s.loaded.emplace(load());
    } catch (...) {
      s.load_error = std::current_exception();
    }
  });
  if (s.load_error) std::rethrow_exception(s.load_error);
  return s.loaded->api;
}

const std::vector<std::string>* start_environment() {
  State& s = state();
  return s.started.load() ? &s.start_environment : nullptr;
}

const Api& initialized() {
  const Api& a = api();
  State& s = state();
  std::call_once(s.init_once, [&] {
    try {
      if (a.cuInit == nullptr) throw_missing_entry_point("cuInit");
      for (char** e = environ; e && *e; ++e) s.start_environment.emplace_back(*e);
      s.started.store(true);
      const CUresult result = a.cuInit(0);
      switch (result) {
        case CUDA_SUCCESS:
          break;
        case CUDA_ERROR_NO_DEVICE:
          throw DeviceNotFoundError("no CUDA device visible" + describe_visible_devices());
        case CUDA_ERROR_STUB_LIBRARY:
          throw LibraryNotFoundError("CUDA driver not found (" + a.library_path +
                                         " is the toolkit's stub library, not a driver)",
                                     "libcuda.so.1");
        case CUDA_ERROR_DEVICE_UNAVAILABLE:
        case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
        case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
        case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
          try {
            throw_driver_error("cuInit", static_cast<int>(result));
          } catch (const Error& e) {
            throw LibraryNotFoundError(std::string("CUDA driver unusable (") + a.library_path +
                                           ", CUDA " + format_cuda_version(a.driver_version) +
                                           "): " + e.what(),
                                       "libcuda.so.1");
          }
        default:
          throw_driver_error("cuInit", static_cast<int>(result));
      }
    } catch (...) {
      s.init_error = std::current_exception();
    }
  });
  if (s.init_error) std::rethrow_exception(s.init_error);
  return a;
}

std::string format_cuda_version(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

void throw_missing_entry_point(const char* name) {
  std::string driver = "unknown";
  try {
    driver = format_cuda_version(api().driver_version);
  } catch (const Error&) {
  }
  throw LibraryNotFoundError(
      std::string("CUDA driver too old: it lacks ") + name + " (driver supports CUDA " + driver +
          ", this build needs the entry point from CUDA " + format_cuda_version(CUDA_VERSION) + ")",
      "libcuda.so.1");
}

}  // namespace cudatool::driver
