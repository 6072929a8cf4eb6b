#include "cudatool/driver/nvml.hpp"

#include <cstdlib>
#include <future>
#include <mutex>

#include "cudatool/base/error.hpp"
#include "cudatool/driver/dynamic_library.hpp"

namespace cudatool {
namespace {

// The few NVML declarations used, from NVML's API reference (nvml.h is not part of the
// CUDA toolkit's include directory everywhere).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr nvmlReturn_t NVML_SUCCESS = 0;

struct Nvml {
  DynamicLibrary library;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
  bool ready = false;  // initialised; an entry point not found stays nullptr
};

Nvml load_nvml() {
  Nvml nvml;
  if (const char* off = std::getenv("CUDATOOL_NO_NVML"); off && *off && std::string(off) != "0")
    return nvml;
  try {
    nvml.library = DynamicLibrary::open_first({"libnvidia-ml.so.1"}, "NVML");
  } catch (const Error&) {
    return nvml;
  }
  nvml.init = reinterpret_cast<decltype(nvml.init)>(nvml.library.symbol("nvmlInit_v2"));
  nvml.by_pci_bus_id = reinterpret_cast<decltype(nvml.by_pci_bus_id)>(
      nvml.library.symbol("nvmlDeviceGetHandleByPciBusId_v2"));
  nvml.memory_info =
      reinterpret_cast<decltype(nvml.memory_info)>(nvml.library.symbol("nvmlDeviceGetMemoryInfo"));
  nvml.driver_version = reinterpret_cast<decltype(nvml.driver_version)>(
      nvml.library.symbol("nvmlSystemGetDriverVersion"));
  nvml.ready = nvml.init && nvml.init() == NVML_SUCCESS;
  return nvml;
}

// Kept in a global, never unloaded: NVML is not shut down, and unloading it at exit would
// race with its own teardown (a global keeps it reachable for leak checkers, too).
Nvml* g_nvml = nullptr;

std::shared_future<Nvml*>& nvml_future() {
  static std::once_flag once;
  static std::shared_future<Nvml*> future;
  std::call_once(once, [] {
    future = std::async(std::launch::async, [] {
               g_nvml = new Nvml(load_nvml());
               return g_nvml;
             }).share();
  });
  return future;
}

}  // namespace

void nvml_preload() {
  nvml_future();
}

std::optional<MemoryUsage> nvml_memory_usage(const std::string& pci_bus_id) {
  Nvml* nvml = nvml_future().get();
  if (!nvml->ready || !nvml->by_pci_bus_id || !nvml->memory_info) return std::nullopt;
  nvmlDevice_t device = nullptr;
  nvmlMemory_t memory{};
  if (nvml->by_pci_bus_id(pci_bus_id.c_str(), &device) != NVML_SUCCESS ||
      nvml->memory_info(device, &memory) != NVML_SUCCESS)
    return std::nullopt;
  return MemoryUsage{memory.total, memory.free, memory.used};
}

std::optional<std::string> nvml_driver_version() {
  Nvml* nvml = nvml_future().get();
  if (!nvml->ready || !nvml->driver_version) return std::nullopt;
  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80.
  char version[96] = {};
  if (nvml->driver_version(version, sizeof version - 1) != NVML_SUCCESS || !version[0])
    return std::nullopt;
  return std::string(version);
}

}  // namespace cudatool
