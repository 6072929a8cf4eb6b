// The fake NVML (libfakenvml.so) for tests on machines without a GPU: cudatool opens it
// instead of libnvidia-ml.so.1 when CUDATOOL_LIBNVML names it. Its GPUs are the fake
// driver's machine (tests/fake_driver): FAKE_CUDA_DEVICES (one GPU per entry, default two)
// at FAKE_CUDA_PCI_BUSES (hex, default 1, 2, ...), with the fake driver's UUIDs, listed by
// PCI bus as NVML lists them. Each is a healthy Hopper-like GPU (ECC on, no errors, no rows
// remapped, PCIe Gen5 x16, no NVLink, no page retirement). The variables:
//   FAKE_NVML_INIT_RESULT     nvmlInit_v2's answer (default 0)
//   FAKE_NVML_DRIVER_VERSION  nvmlSystemGetDriverVersion (default 999.99.99)
//   FAKE_NVML_COUNT           how many GPUs NVML lists (default: FAKE_CUDA_DEVICES' count);
//                             one CUDA does not list is at bus index + 1
//   FAKE_NVML_LOST            comma-separated bus numbers whose handle queries answer
//                             NVML_ERROR_GPU_IS_LOST (15: a GPU off the bus)
//   FAKE_NVML_PROCESSES       processes, comma-separated BUS/PID/BYTES/KIND entries: KIND C
//                             (compute) or G (graphics), BYTES "na" for "not available"
//                             (e.g. "1/4242/83429425152/C,1/99/na/G")
//   FAKE_NVML_PROCESS_RESULT  the process queries' answer instead (4: no permission)
//   FAKE_NVML_USED_MEMORY     used bytes per device (default: its processes' sum)
//   FAKE_NVML_NO_MEMORY_V2    set: nvmlDeviceGetMemoryInfo_v2 answers "not supported"
//   FAKE_NVML_UTILIZATION     "GPU,MEMORY" percentages (default "0,0")
//   FAKE_NVML_COMPUTE_MODE    nvmlComputeMode_t (default 0; 2 prohibited, 3 exclusive)
//   FAKE_NVML_CLOCK_EVENTS    clock-event reason bits, decimal or 0x hex (default 0x1: idle)
//   FAKE_NVML_REMAP           "CORRECTABLE,UNCORRECTABLE,PENDING,FAILED" remapped rows
//   FAKE_NVML_PCIE_CURRENT    "GEN,WIDTH" of the link now (default "5,16"; maximum Gen5 x16)
//   FAKE_NVML_FABRIC          "STATE,STATUS" of nvmlDeviceGetGpuFabricInfo (unset: not
//                             supported; 3,0: registered)
//   FAKE_NVML_MIG             "current,pending" MIG mode (default "0,0"; "na": not supported)
//   FAKE_NVML_ECC             "current,pending" ECC mode (default "1,1"; "na": not supported)
//   FAKE_NVML_NO_FIELDS       1: nvmlDeviceGetFieldValues is not supported (an older NVML)
//   FAKE_NVML_DISPLAY         "mode,active" (default "na": not supported)
// It never replaces a run on a real GPU: every value is made up.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using nvmlReturn_t = int;
constexpr nvmlReturn_t kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kNotFound = 6,
                       kInsufficientSize = 7, kGpuIsLost = 15, kVersionMismatch = 25;
constexpr unsigned long long kTotal = 85899345920ull;  // the fake driver's 80 GiB
constexpr unsigned long long kReserved = 512ull << 20;

struct Device;  // a handle is the GPU's bus number, cast
// nvmlPciInfo_t as NVML 12 lays it out.
struct PciInfo {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct Memory {
  unsigned long long total, free, used;
};
struct MemoryV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};
struct ProcessInfo {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
};
struct Utilization {
  unsigned gpu, memory;
};
struct FabricInfo {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
};
struct FieldValue {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  unsigned long long value;
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
  int machine_index;  // the fake driver's index, which its UUID is made of
  unsigned bus;
};

// NVML's list: the fake driver's machine (and FAKE_NVML_COUNT's extra GPUs), by PCI bus.
std::vector<Gpu> gpus() {
  std::size_t count = split(env("FAKE_CUDA_DEVICES", "9.0,8.0")).size();
  if (const std::string given = env("FAKE_NVML_COUNT", ""); !given.empty())
    count = std::strtoul(given.c_str(), nullptr, 10);
  const auto listed = split(env("FAKE_CUDA_PCI_BUSES", ""));
  std::vector<Gpu> out;
  for (std::size_t i = 0; i < count; ++i)
    out.push_back({static_cast<int>(i), i < listed.size() ? static_cast<unsigned>(std::strtoul(
                                                                listed[i].c_str(), nullptr, 16))
                                                          : static_cast<unsigned>(i + 1)});
  std::stable_sort(out.begin(), out.end(), [](Gpu a, Gpu b) { return a.bus < b.bus; });
  return out;
}

unsigned bus_of(Device* d) {
  return static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(d));
}

// The GPU of a handle; false for one that is none.
bool gpu_of(Device* d, Gpu& gpu) {
  for (const Gpu& g : gpus())
    if (g.bus == bus_of(d)) {
      gpu = g;
      return true;
    }
  return false;
}

bool listed(const char* variable, unsigned bus) {
  const std::string list = "," + env(variable, "") + ",";
  return list.find("," + std::to_string(bus) + ",") != std::string::npos;
}

// The handle of the GPU on `bus`, or NVML's error.
nvmlReturn_t handle(unsigned bus, Device** device) {
  if (listed("FAKE_NVML_LOST", bus)) return kGpuIsLost;
  *device = reinterpret_cast<Device*>(static_cast<std::uintptr_t>(bus));
  return kSuccess;
}

// "a,b" into two numbers; false for "na" (not supported) or an empty value.
bool pair(const char* variable, const char* fallback, int& a, int& b) {
  const std::string value = env(variable, fallback);
  if (value.empty() || value == "na") return false;
  return std::sscanf(value.c_str(), "%d,%d", &a, &b) == 2;
}

struct FakeProcess {
  unsigned bus, pid;
  unsigned long long bytes;  // ~0: not available
  char kind;
};

std::vector<FakeProcess> processes() {
  std::vector<FakeProcess> out;
  for (const std::string& item : split(env("FAKE_NVML_PROCESSES", ""))) {
    FakeProcess p{};
    char bytes[32] = {};
    if (std::sscanf(item.c_str(), "%u/%u/%31[^/]/%c", &p.bus, &p.pid, bytes, &p.kind) == 4) {
      p.bytes = std::string(bytes) == "na" ? ~0ull : std::strtoull(bytes, nullptr, 10);
      out.push_back(p);
    }
  }
  return out;
}

unsigned long long used_memory(unsigned bus) {
  const std::string given = env("FAKE_NVML_USED_MEMORY", "");
  if (!given.empty()) return std::strtoull(given.c_str(), nullptr, 10);
  unsigned long long used = 0;
  for (const auto& p : processes())
    if (p.bus == bus && p.bytes != ~0ull) used += p.bytes;
  return used;
}

nvmlReturn_t list_processes(Device* d, unsigned* count, ProcessInfo* infos, char kind) {
  if (count == nullptr) return kInvalidArgument;
  const int forced = std::atoi(env("FAKE_NVML_PROCESS_RESULT", "0").c_str());
  if (forced != 0) return forced;
  std::vector<ProcessInfo> mine;
  for (const auto& p : processes())
    if (p.bus == bus_of(d) && p.kind == kind) mine.push_back({p.pid, p.bytes, ~0u, ~0u});
  if (*count < mine.size()) {
    *count = static_cast<unsigned>(mine.size());
    return kInsufficientSize;
  }
  *count = static_cast<unsigned>(mine.size());
  if (!mine.empty()) std::memcpy(infos, mine.data(), mine.size() * sizeof(ProcessInfo));
  return kSuccess;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
  return std::atoi(env("FAKE_NVML_INIT_RESULT", "0").c_str());
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  std::snprintf(version, length, "%s", env("FAKE_NVML_DRIVER_VERSION", "999.99.99").c_str());
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(gpus().size());
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, Device** device) {
  const auto all = gpus();
  if (index >= all.size()) return kInvalidArgument;
  return handle(all[index].bus, device);
}
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* id, Device** device) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return kInvalidArgument;
  for (const Gpu& g : gpus())
    if (g.bus == bus) return handle(bus, device);
  return kNotFound;
}
// NVML's index: bus order, over every fake GPU (CUDA_VISIBLE_DEVICES does not change it).
nvmlReturn_t nvmlDeviceGetIndex(Device* d, unsigned* index) {
  const auto all = gpus();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].bus == bus_of(d)) {
      *index = static_cast<unsigned>(i);
      return kSuccess;
    }
  return kInvalidArgument;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(Device* d, PciInfo* pci) {
  Gpu gpu{};
  if (!gpu_of(d, gpu)) return kInvalidArgument;
  std::memset(pci, 0, sizeof *pci);
  pci->bus = gpu.bus;
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", gpu.bus);
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02X:00.0", gpu.bus);
  return kSuccess;
}
// The fake driver's UUID of this GPU (its bytes: tests/fake_driver/fake_libcuda.cpp).
nvmlReturn_t nvmlDeviceGetUUID(Device* d, char* uuid, unsigned length) {
  Gpu gpu{};
  if (!gpu_of(d, gpu)) return kInvalidArgument;
  const int m = gpu.machine_index;
  unsigned char b[16];
  for (int i = 0; i < 16; ++i) b[i] = static_cast<unsigned char>(i == 15 ? m : 0x10 * (m + 1) + i);
  std::snprintf(uuid, length,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(Device* d, Memory* m) {
  m->total = kTotal;
  m->used = used_memory(bus_of(d)) + kReserved;  // the v1 query counts the reservation
  m->free = m->total - m->used;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(Device* d, MemoryV2* m) {
  if (!env("FAKE_NVML_NO_MEMORY_V2", "").empty()) return kNotSupported;
  if (m->version != (static_cast<unsigned>(sizeof(MemoryV2)) | (2u << 24))) return kVersionMismatch;
  m->total = kTotal;
  m->reserved = kReserved;
  m->used = used_memory(bus_of(d));
  m->free = m->total - m->reserved - m->used;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(Device* d, unsigned* count,
                                                     ProcessInfo* infos) {
  return list_processes(d, count, infos, 'C');
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(Device* d, unsigned* count,
                                                      ProcessInfo* infos) {
  return list_processes(d, count, infos, 'G');
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(Device*, Utilization* u) {
  unsigned gpu = 0, memory = 0;
  std::sscanf(env("FAKE_NVML_UTILIZATION", "0,0").c_str(), "%u,%u", &gpu, &memory);
  u->gpu = gpu;
  u->memory = memory;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetComputeMode(Device*, int* mode) {
  *mode = std::atoi(env("FAKE_NVML_COMPUTE_MODE", "0").c_str());
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(Device*, unsigned long long* reasons) {
  *reasons = std::strtoull(env("FAKE_NVML_CLOCK_EVENTS", "0x1").c_str(), nullptr, 0);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMigMode(Device*, unsigned* current, unsigned* pending) {
  int a = 0, b = 0;
  if (!pair("FAKE_NVML_MIG", "0,0", a, b)) return kNotSupported;
  *current = static_cast<unsigned>(a);
  *pending = static_cast<unsigned>(b);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetEccMode(Device*, int* current, int* pending) {
  if (!pair("FAKE_NVML_ECC", "1,1", *current, *pending)) return kNotSupported;
  return kSuccess;
}
// The ECC fields (NVML_FI_DEV_ECC_CURRENT 1, _PENDING 2) as nvmlDeviceGetEccMode answers;
// any other field is not supported.
nvmlReturn_t nvmlDeviceGetFieldValues(Device* d, int count, FieldValue* values) {
  Gpu gpu{};
  if (!gpu_of(d, gpu) || count < 0 || (count > 0 && !values)) return kInvalidArgument;
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
nvmlReturn_t nvmlDeviceGetTotalEccErrors(Device*, int, int, unsigned long long* count) {
  *count = 0;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(Device*, unsigned* correctable, unsigned* uncorrectable,
                                       unsigned* pending, unsigned* failed) {
  *correctable = *uncorrectable = *pending = *failed = 0;
  std::sscanf(env("FAKE_NVML_REMAP", "0,0,0,0").c_str(), "%u,%u,%u,%u", correctable, uncorrectable,
              pending, failed);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(Device*, unsigned* value) {
  *value = 5;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(Device*, unsigned* value) {
  *value = 16;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(Device*, unsigned* value) {
  unsigned width = 16;
  *value = 5;
  std::sscanf(env("FAKE_NVML_PCIE_CURRENT", "5,16").c_str(), "%u,%u", value, &width);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(Device*, unsigned* value) {
  unsigned generation = 5;
  *value = 16;
  std::sscanf(env("FAKE_NVML_PCIE_CURRENT", "5,16").c_str(), "%u,%u", &generation, value);
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetGpuFabricInfo(Device*, FabricInfo* info) {
  const std::string given = env("FAKE_NVML_FABRIC", "");
  if (given.empty()) return kNotSupported;
  unsigned state = 0;
  int status = 0;
  std::sscanf(given.c_str(), "%u,%d", &state, &status);
  std::memset(info, 0, sizeof *info);
  info->state = static_cast<unsigned char>(state);
  info->status = status;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetDisplayMode(Device* d, int* mode) {
  Gpu gpu{};
  int active = 0;
  if (!gpu_of(d, gpu) || !pair("FAKE_NVML_DISPLAY", "na", *mode, active)) return kNotSupported;
  return kSuccess;
}
nvmlReturn_t nvmlDeviceGetDisplayActive(Device* d, int* active) {
  Gpu gpu{};
  int mode = 0;
  if (!gpu_of(d, gpu) || !pair("FAKE_NVML_DISPLAY", "na", mode, *active)) return kNotSupported;
  return kSuccess;
}

}  // extern "C"
