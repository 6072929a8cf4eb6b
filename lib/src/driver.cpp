#include "cudatool/driver.hpp"

#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "cudatool/dynamic_library.hpp"

namespace cudatool::driver {
namespace {

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

struct Loaded {
  DynamicLibrary library;
  Api api;
};

std::string describe_visible_devices() {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible == nullptr) return "";
  return std::string(" (CUDA_VISIBLE_DEVICES=\"") + visible + "\")";
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
    throw LibraryNotFoundError(std::string("CUDA driver not found (") + candidate +
                                   "): " + std::string(e.what()).substr(23),
                               "libcuda.so.1");
  }
  loaded.api.library_path = candidate;
  auto get_proc = reinterpret_cast<GetProcAddress>(loaded.library.symbol("cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    throw LibraryNotFoundError("CUDA driver too old (" + candidate +
                                   "): it has no cuGetProcAddress_v2; cudatool needs a "
                                   "driver for CUDA 12.0 or newer",
                               "libcuda.so.1");
  }
  // The toolkit's stub libcuda.so answers every call with CUDA_ERROR_STUB_LIBRARY.
  {
    void* probe = nullptr;
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
    if (get_proc("cuInit", &probe, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) ==
        CUDA_ERROR_STUB_LIBRARY) {
      throw LibraryNotFoundError("CUDA driver not found (" + candidate +
                                     " is the toolkit's stub library, not a driver)",
                                 "libcuda.so.1");
    }
  }
  // Each entry point in the version this build's cuda.h declares; one the driver lacks
  // stays null and throws when called (throw_missing_entry_point).
#define CUDATOOL_RESOLVE(name)                                                           \
  {                                                                                      \
    void* address = nullptr;                                                             \
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;                 \
    if (get_proc(#name, &address, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) == \
            CUDA_SUCCESS &&                                                              \
        status == CU_GET_PROC_ADDRESS_SUCCESS) {                                         \
      loaded.api.name = reinterpret_cast<decltype(loaded.api.name)>(address);            \
    }                                                                                    \
  }
  CUDATOOL_DRIVER_FUNCTIONS(CUDATOOL_RESOLVE)
#undef CUDATOOL_RESOLVE
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
};

State& state() {
  static State s;
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

const Api& initialized() {
  const Api& a = api();
  State& s = state();
  std::call_once(s.init_once, [&] {
    try {
      if (a.cuInit == nullptr) throw_missing_entry_point("cuInit");
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
