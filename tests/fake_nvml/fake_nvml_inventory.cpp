// A fake NVML (libfakenvml_inventory.so) for the device cache's tests on machines without a
// GPU: cudatool opens it instead of libnvidia-ml.so.1 when CUDATOOL_LIBNVML names it. Its
// GPUs are the fake driver's machine (tests/fake_driver): FAKE_CUDA_DEVICES (one GPU per
// entry, default two) at FAKE_CUDA_PCI_BUSES (default 1, 2, ...), with the fake driver's
// UUIDs, listed by PCI bus as NVML lists them. What can change while a machine runs:
//   FAKE_NVML_INIT_RESULT     nvmlInit_v2's answer (default 0)
//   FAKE_NVML_DRIVER_VERSION  nvmlSystemGetDriverVersion (default 580.159.04)
//   FAKE_NVML_MIG             "current,pending" MIG mode (default: not supported)
//   FAKE_NVML_ECC             "current,pending" ECC mode (default "1,1"; "na": not supported)
//   FAKE_NVML_COMPUTE_MODE    nvmlComputeMode_t (default 0)
//   FAKE_NVML_DISPLAY         "mode,active" (default "0,0")
// Every value is made up; it never replaces a run on a real GPU.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using nvmlReturn_t = int;
constexpr nvmlReturn_t kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6;

struct nvmlDevice_st;
struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct Memory {
  unsigned long long total, free, used;
};

std::string env(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

struct Gpu {
  int machine_index;
  unsigned bus;
};

// The fake driver's machine, by PCI bus.
std::vector<Gpu> gpus() {
  const std::size_t count = split(env("FAKE_CUDA_DEVICES", "9.0,8.0")).size();
  const auto listed = split(env("FAKE_CUDA_PCI_BUSES", ""));
  std::vector<Gpu> out;
  for (std::size_t i = 0; i < count; ++i)
    out.push_back({static_cast<int>(i), i < listed.size() ? static_cast<unsigned>(std::strtoul(
                                                                listed[i].c_str(), nullptr, 16))
                                                          : static_cast<unsigned>(i + 1)});
  std::stable_sort(out.begin(), out.end(), [](Gpu a, Gpu b) { return a.bus < b.bus; });
  return out;
}

// A handle is the NVML index + 1.
nvmlDevice_st* handle(std::size_t index) {
  return reinterpret_cast<nvmlDevice_st*>(static_cast<std::uintptr_t>(index + 1));
}
bool gpu_of(nvmlDevice_st* device, Gpu& gpu) {
  const auto index = reinterpret_cast<std::uintptr_t>(device);
  const auto all = gpus();
  if (index == 0 || index > all.size()) return false;
  gpu = all[index - 1];
  return true;
}

// "a,b" into two numbers; false for "na" (not supported).
bool pair(const char* variable, const char* fallback, int& a, int& b) {
  const std::string value = env(variable, fallback);
  if (value.empty() || value == "na") return false;
  return std::sscanf(value.c_str(), "%d,%d", &a, &b) == 2;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
  return std::atoi(env("FAKE_NVML_INIT_RESULT", "0").c_str());
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  std::snprintf(version, length, "%s", env("FAKE_NVML_DRIVER_VERSION", "580.159.04").c_str());
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(gpus().size());
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_st** device) {
  if (index >= gpus().size()) return kInvalidArgument;
  *device = handle(index);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* id, nvmlDevice_st** device) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return kInvalidArgument;
  const auto all = gpus();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].bus == bus) {
      *device = handle(i);
      return kSuccess;
    }
  return kNotFound;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_st* device, Memory* memory) {
  Gpu gpu{};
  if (!gpu_of(device, gpu)) return kInvalidArgument;
  // NVML's total is not CUDA's (the fake driver's 80 GiB): the cache must keep CUDA's.
  *memory = {85899345920ull + 4096ull * 1024 * 1024, 85899345920ull, 4096ull * 1024 * 1024};
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_st* device, PciInfo* info) {
  Gpu gpu{};
  if (!gpu_of(device, gpu)) return kInvalidArgument;
  std::memset(info, 0, sizeof *info);
  info->bus = gpu.bus;
  std::snprintf(info->busId, sizeof info->busId, "00000000:%02X:00.0", gpu.bus);
  std::snprintf(info->busIdLegacy, sizeof info->busIdLegacy, "0000:%02X:00.0", gpu.bus);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_st* device, char* uuid, unsigned length) {
  Gpu gpu{};
  if (!gpu_of(device, gpu)) return kInvalidArgument;
  unsigned char b[16];
  for (int i = 0; i < 16; ++i)
    b[i] = static_cast<unsigned char>(i == 15 ? gpu.machine_index
                                              : 0x10 * (gpu.machine_index + 1) + i);
  std::snprintf(uuid, length,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_st* device, unsigned* current, unsigned* pending) {
  Gpu gpu{};
  if (!gpu_of(device, gpu)) return kInvalidArgument;
  int a = 0, b = 0;
  if (!pair("FAKE_NVML_MIG", "", a, b)) return kNotSupported;
  *current = static_cast<unsigned>(a);
  *pending = static_cast<unsigned>(b);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_st* device, int* current, int* pending) {
  Gpu gpu{};
  if (!gpu_of(device, gpu)) return kInvalidArgument;
  if (!pair("FAKE_NVML_ECC", "1,1", *current, *pending)) return kNotSupported;
  return kSuccess;
}
// The ECC fields (NVML_FI_DEV_ECC_CURRENT 1, _PENDING 2) from FAKE_NVML_ECC, as
// nvmlDeviceGetEccMode answers; any other field is not supported. FAKE_NVML_NO_FIELDS=1 makes
// the call itself not supported (an older NVML), so that cudatool falls back to the mode call.
struct FieldValue {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  unsigned long long value;
};
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_st* device, int count, FieldValue* values) {
  Gpu gpu{};
  if (!gpu_of(device, gpu) || count < 0 || (count > 0 && !values)) return kInvalidArgument;
  if (env("FAKE_NVML_NO_FIELDS", "") == "1") return kNotSupported;
  for (int i = 0; i < count; ++i) {
    FieldValue& v = values[i];
    int current = 0, pending = 0;
    v.nvmlReturn = kNotSupported;
    v.valueType = 3;  // NVML_VALUE_TYPE_UNSIGNED_LONG_LONG
    if ((v.fieldId == 1 || v.fieldId == 2) && pair("FAKE_NVML_ECC", "1,1", current, pending)) {
      v.nvmlReturn = kSuccess;
      v.value = static_cast<unsigned long long>(v.fieldId == 1 ? current : pending);
    }
  }
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_st* device, int* mode) {
  Gpu gpu{};
  if (!gpu_of(device, gpu)) return kInvalidArgument;
  *mode = std::atoi(env("FAKE_NVML_COMPUTE_MODE", "0").c_str());
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_st* device, int* mode) {
  Gpu gpu{};
  int active = 0;
  if (!gpu_of(device, gpu) || !pair("FAKE_NVML_DISPLAY", "0,0", *mode, active))
    return kNotSupported;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_st* device, int* active) {
  Gpu gpu{};
  int mode = 0;
  if (!gpu_of(device, gpu) || !pair("FAKE_NVML_DISPLAY", "0,0", mode, *active))
    return kNotSupported;
  return kSuccess;
}

}  // extern "C"
