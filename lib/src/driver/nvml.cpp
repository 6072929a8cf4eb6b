#include "cudatool/driver/nvml.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "driver/dynamic_library.hpp"
#include "driver/nvml_queries.hpp"
#include "driver/nvml_symbol.hpp"

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
// nvmlPciInfo_t as NVML 12's nvml.h lays it out (the _v2/_v3 query functions fill it).
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
using nvmlEnableState_t = int;  // 0 disabled, 1 enabled
// nvmlMemory_v2_t: `used` without the driver's reservation, which has its own field.
struct nvmlMemory_v2_t {
  unsigned version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
// NVML_STRUCT_VERSION(Memory, 2): the struct's size with the version in the top byte.
constexpr unsigned kNvmlMemoryV2 = static_cast<unsigned>(sizeof(nvmlMemory_v2_t)) | (2u << 24);
// nvmlProcessInfo_t as the _v2 and _v3 process queries fill it (the _v1 query has only the
// first two fields).
struct nvmlProcessInfo_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
struct nvmlProcessInfo_v1_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
};
// nvmlGpuFabricInfo_t (nvmlDeviceGetGpuFabricInfo): the cluster's UUID, the registration's
// status, the clique, and its state (an unsigned char).
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
};
struct nvmlUtilization_t {
  unsigned gpu;
  unsigned memory;
};
constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ull;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
constexpr int NVML_VOLATILE_ECC = 0;
constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;

struct Nvml {
  DynamicLibrary library;
  std::string why_not = "not loaded";
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*device_index)(nvmlDevice_t, unsigned*) = nullptr;
  // The health check's entry points, each by the exact symbol nvml.h declares; a missing
  // one leaves its reading absent.
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*total_ecc_errors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*retired_pages)(nvmlDevice_t, int, unsigned*, unsigned long long*) = nullptr;
  nvmlReturn_t (*retired_pages_pending)(nvmlDevice_t, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*clock_event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*curr_pcie_generation)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*curr_pcie_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*max_pcie_generation)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*max_pcie_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*nvlink_version)(nvmlDevice_t, unsigned, unsigned*) = nullptr;
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*fabric_info)(nvmlDevice_t, nvmlGpuFabricInfo_t*) = nullptr;
  // Every GPU NVML knows of, for the ones CUDA does not list (lost, off the bus).
  nvmlReturn_t (*device_count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  // The occupancy check's: processes (newest query first; _v1 fills the shorter struct),
  // memory without the reservation, utilization, compute mode.
  using ProcessQuery = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, void*);
  ProcessQuery compute_processes = nullptr, graphics_processes = nullptr;
  bool processes_v1 = false;  // the queries found are the _v1 ones
  nvmlReturn_t (*memory_info_v2)(nvmlDevice_t, nvmlMemory_v2_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*compute_mode)(nvmlDevice_t, int*) = nullptr;
  bool ready = false;
};

// An entry point of Nvml and the symbol nvml.h declares it by.
template <class Fn>
struct Entry {
  Fn Nvml::*member;
  const char* symbol;
};
// (Spelled out: clang before 17 deduces no template arguments for an aggregate.)
template <class Fn>
Entry(Fn Nvml::*, const char*) -> Entry<Fn>;

// Looks up each entry's symbol; one NVML lacks stays nullptr.
template <class... Fn>
void resolve(Nvml& nvml, const Entry<Fn>&... entries) {
  ((nvml.*entries.member = reinterpret_cast<Fn>(nvml.library.symbol(entries.symbol))), ...);
}

Nvml load_nvml() {
  Nvml nvml;
  if (const char* off = std::getenv("CUDATOOL_NO_NVML"); off && *off && std::string(off) != "0") {
    nvml.why_not = "CUDATOOL_NO_NVML is set";
    return nvml;
  }
  // CUDATOOL_LIBNVML: another file instead (a regular file; tests use a fake NVML).
  const char* override_path = std::getenv("CUDATOOL_LIBNVML");
  const std::string candidate =
      override_path && *override_path ? std::string(override_path) : "libnvidia-ml.so.1";
  try {
    nvml.library = DynamicLibrary::open_first({candidate}, "NVML");
  } catch (const Error&) {
    nvml.why_not = "NVML (" + printable(candidate) + ") not found";
    return nvml;
  }
  resolve(nvml, Entry{&Nvml::init, "nvmlInit_v2"},
          Entry{&Nvml::by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2"},
          Entry{&Nvml::memory_info, "nvmlDeviceGetMemoryInfo"},
          Entry{&Nvml::driver_version, "nvmlSystemGetDriverVersion"},
          Entry{&Nvml::device_index, "nvmlDeviceGetIndex"},
          Entry{&Nvml::ecc_mode, "nvmlDeviceGetEccMode"},
          Entry{&Nvml::total_ecc_errors, "nvmlDeviceGetTotalEccErrors"},
          Entry{&Nvml::retired_pages, "nvmlDeviceGetRetiredPages"},
          Entry{&Nvml::retired_pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus"},
          Entry{&Nvml::remapped_rows, "nvmlDeviceGetRemappedRows"},
          Entry{&Nvml::clock_event_reasons, "nvmlDeviceGetCurrentClocksEventReasons"},
          Entry{&Nvml::curr_pcie_generation, "nvmlDeviceGetCurrPcieLinkGeneration"},
          Entry{&Nvml::curr_pcie_width, "nvmlDeviceGetCurrPcieLinkWidth"},
          Entry{&Nvml::max_pcie_generation, "nvmlDeviceGetMaxPcieLinkGeneration"},
          Entry{&Nvml::max_pcie_width, "nvmlDeviceGetMaxPcieLinkWidth"},
          Entry{&Nvml::mig_mode, "nvmlDeviceGetMigMode"},
          Entry{&Nvml::nvlink_state, "nvmlDeviceGetNvLinkState"},
          Entry{&Nvml::nvlink_version, "nvmlDeviceGetNvLinkVersion"},
          Entry{&Nvml::nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2"},
          Entry{&Nvml::fabric_info, "nvmlDeviceGetGpuFabricInfo"},
          Entry{&Nvml::device_count, "nvmlDeviceGetCount_v2"},
          Entry{&Nvml::by_index, "nvmlDeviceGetHandleByIndex_v2"},
          Entry{&Nvml::pci_info, "nvmlDeviceGetPciInfo_v3"},
          Entry{&Nvml::uuid, "nvmlDeviceGetUUID"},
          Entry{&Nvml::memory_info_v2, "nvmlDeviceGetMemoryInfo_v2"},
          Entry{&Nvml::utilization, "nvmlDeviceGetUtilizationRates"},
          Entry{&Nvml::compute_mode, "nvmlDeviceGetComputeMode"});
  // NVML 12.2 renamed the throttle reasons "clock event reasons"; older ones have only the
  // old symbol, with the same signature and bits.
  if (nvml.clock_event_reasons == nullptr)
    resolve(nvml, Entry{&Nvml::clock_event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons"});
  // The process queries, newest first; the unversioned ones fill the shorter _v1 struct.
  for (const char* version : {"_v3", "_v2", ""}) {
    if (nvml.compute_processes) break;
    const std::string compute = std::string("nvmlDeviceGetComputeRunningProcesses") + version;
    const std::string graphics = std::string("nvmlDeviceGetGraphicsRunningProcesses") + version;
    resolve(nvml, Entry{&Nvml::compute_processes, compute.c_str()},
            Entry{&Nvml::graphics_processes, graphics.c_str()});
    nvml.processes_v1 = *version == '\0';
  }
  if (!(nvml.init && nvml.by_pci_bus_id && nvml.memory_info)) {
    nvml.why_not = "NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2";
    return nvml;
  }
  if (const nvmlReturn_t r = nvml.init(); r != NVML_SUCCESS) {
    nvml.why_not = "nvmlInit_v2 failed (nvmlReturn_t " + std::to_string(r) + ")";
    return nvml;
  }
  nvml.ready = true;
  nvml.why_not.clear();
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

std::optional<std::string> nvml_pci_bus_id(std::string_view id) {
  // Each field: 1 to `digits` hex digits, then `end` (or the end of the text).
  unsigned long fields[4] = {};
  const std::size_t widths[4] = {8, 2, 2, 1};
  const char ends[4] = {':', ':', '.', '\0'};
  std::size_t at = 0;
  for (int f = 0; f < 4; ++f) {
    std::size_t digits = 0;
    while (at < id.size() && std::isxdigit(static_cast<unsigned char>(id[at])) &&
           digits <= widths[f]) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(id[at])));
      fields[f] = fields[f] * 16 + static_cast<unsigned long>(c <= '9' ? c - '0' : c - 'a' + 10);
      ++at;
      ++digits;
    }
    if (digits == 0 || digits > widths[f]) return std::nullopt;
    if (ends[f] == '\0') {
      if (at != id.size()) return std::nullopt;
    } else {
      if (at >= id.size() || id[at] != ends[f]) return std::nullopt;
      ++at;
    }
  }
  char out[32];
  std::snprintf(out, sizeof out, "%08lX:%02lX:%02lX.%lX", fields[0], fields[1], fields[2],
                fields[3]);
  return out;
}

void nvml_preload() {
  nvml_future();
}

bool nvml_available(std::string* why) {
  Nvml* nvml = nvml_future().get();
  if (why) *why = nvml->why_not;
  return nvml->ready;
}

namespace {

// "00000000:07:00.0" (NVML) and "0000:07:00.0" (CUDA) name the same device.
std::string normalize_bus_id(const std::string& id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return id;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return out;
}

// The one shape of a query of one device: NVML loaded and ready, then the device at
// `pci_bus_id` by NVML's lookup.
struct DeviceLookup {
  Nvml* nvml = nullptr;           // nullptr: NVML is not ready (nvml_available says why)
  nvmlDevice_t device = nullptr;  // nullptr: NVML has none there, `lookup` says why
  nvmlReturn_t lookup = NVML_SUCCESS;
};

DeviceLookup look_up(const std::string& pci_bus_id) {
  DeviceLookup l;
  Nvml* nvml = nvml_future().get();
  if (!nvml->ready) return l;
  l.nvml = nvml;
  l.lookup = nvml->by_pci_bus_id(pci_bus_id.c_str(), &l.device);
  if (l.lookup != NVML_SUCCESS) l.device = nullptr;
  return l;
}

// Each reading of nvml_health, into `h` where NVML answers (absent where it does not).
void read_ecc(const Nvml& nvml, nvmlDevice_t d, NvmlHealth& h) {
  if (nvml.ecc_mode) {
    nvmlEnableState_t current = 0, pending = 0;
    if (nvml.ecc_mode(d, &current, &pending) == NVML_SUCCESS) {
      h.ecc_enabled = current != 0;
      h.ecc_pending = pending != 0;
    }
  }
  if (nvml.total_ecc_errors && h.ecc_enabled.value_or(false)) {
    unsigned long long count = 0;
    if (nvml.total_ecc_errors(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &count) ==
        NVML_SUCCESS)
      h.ecc_uncorrected_volatile = count;
  }
}

void read_retired_pages(const Nvml& nvml, nvmlDevice_t d, NvmlHealth& h) {
  if (nvml.retired_pages) {
    // Causes 0 (multiple single-bit errors) and 1 (a double-bit error); a zero-sized
    // query answers the count (NVML_ERROR_INSUFFICIENT_SIZE when there are pages).
    unsigned total = 0;
    bool ok = true;
    for (int cause = 0; cause < 2 && ok; ++cause) {
      unsigned count = 0;
      const nvmlReturn_t r = nvml.retired_pages(d, cause, &count, nullptr);
      ok = r == NVML_SUCCESS || r == NVML_ERROR_INSUFFICIENT_SIZE;
      total += count;
    }
    if (ok) h.retired_pages = total;
  }
  if (nvml.retired_pages_pending) {
    nvmlEnableState_t pending = 0;
    if (nvml.retired_pages_pending(d, &pending) == NVML_SUCCESS)
      h.retired_pages_pending = pending != 0;
  }
}

void read_remapped_rows(const Nvml& nvml, nvmlDevice_t d, NvmlHealth& h) {
  if (!nvml.remapped_rows) return;
  unsigned correctable = 0, uncorrectable = 0, pending = 0, failed = 0;
  if (nvml.remapped_rows(d, &correctable, &uncorrectable, &pending, &failed) == NVML_SUCCESS) {
    h.remapped_rows_correctable = correctable;
    h.remapped_rows_uncorrectable = uncorrectable;
    h.remap_pending = pending != 0;
    h.remap_failed = failed != 0;
  }
}

// Clock-event reasons, the PCIe link's maximum and the MIG mode.
void read_clocks_link_and_mig(const Nvml& nvml, nvmlDevice_t d, NvmlHealth& h) {
  if (nvml.clock_event_reasons) {
    unsigned long long reasons = 0;
    if (nvml.clock_event_reasons(d, &reasons) == NVML_SUCCESS) h.throttle_reasons = reasons;
  }
  unsigned value = 0;
  if (nvml.max_pcie_generation && nvml.max_pcie_generation(d, &value) == NVML_SUCCESS)
    h.pcie_max_generation = value;
  if (nvml.max_pcie_width && nvml.max_pcie_width(d, &value) == NVML_SUCCESS)
    h.pcie_max_width = value;
  if (nvml.mig_mode) {
    unsigned current = 0, pending = 0;
    if (nvml.mig_mode(d, &current, &pending) == NVML_SUCCESS) h.mig_enabled = current != 0;
  }
}

void read_nvlinks(const Nvml& nvml, nvmlDevice_t d, NvmlHealth& h) {
  if (!nvml.nvlink_state) return;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t active = 0;
    if (nvml.nvlink_state(d, link, &active) != NVML_SUCCESS) continue;
    NvmlHealth::NvLink l;
    l.link = link;
    l.active = active != 0;
    if (nvml.nvlink_version) nvml.nvlink_version(d, link, &l.version);
    if (nvml.nvlink_remote_pci) {
      // Room beyond the struct, should a newer NVML's struct be larger.
      union {
        nvmlPciInfo_t info;
        char room[512];
      } remote{};
      if (nvml.nvlink_remote_pci(d, link, &remote.info) == NVML_SUCCESS) {
        remote.info.busId[sizeof remote.info.busId - 1] = '\0';
        l.remote_pci_bus_id = normalize_bus_id(remote.info.busId);
      }
    }
    h.nvlinks.push_back(l);
  }
}

void read_fabric(const Nvml& nvml, nvmlDevice_t d, NvmlHealth& h) {
  if (!nvml.fabric_info) return;
  // Room beyond the struct, should a newer NVML's be larger.
  union {
    nvmlGpuFabricInfo_t info;
    char room[256];
  } fabric{};
  if (nvml.fabric_info(d, &fabric.info) == NVML_SUCCESS) {
    h.fabric_state = fabric.info.state;
    h.fabric_status = static_cast<unsigned>(fabric.info.status);
  }
}

}  // namespace

std::optional<NvmlHealth> nvml_health(const std::string& pci_bus_id) {
  const DeviceLookup found = look_up(pci_bus_id);
  if (!found.nvml) return std::nullopt;
  const Nvml* nvml = found.nvml;
  nvmlDevice_t d = found.device;
  NvmlHealth h;
  if (d == nullptr) {
    h.lookup_error = found.lookup;
    return h;
  }
  h.found = true;
  read_ecc(*nvml, d, h);
  read_retired_pages(*nvml, d, h);
  read_remapped_rows(*nvml, d, h);
  read_clocks_link_and_mig(*nvml, d, h);
  read_nvlinks(*nvml, d, h);
  read_fabric(*nvml, d, h);
  return h;
}

std::string nvml_error_name(int result) {
  switch (result) {
    case 0:
      return "NVML_SUCCESS";
    case 6:
      return "NVML_ERROR_NOT_FOUND";
    case 15:
      return "NVML_ERROR_GPU_IS_LOST";
    case 16:
      return "NVML_ERROR_RESET_REQUIRED";
    case 999:
      return "NVML_ERROR_UNKNOWN";
    default:
      return "nvmlReturn_t " + std::to_string(result);
  }
}

std::optional<std::vector<NvmlDeviceState>> nvml_devices() {
  Nvml* nvml = nvml_future().get();
  if (!nvml->ready || !nvml->device_count || !nvml->by_index) return std::nullopt;
  unsigned count = 0;
  if (nvml->device_count(&count) != NVML_SUCCESS) return std::nullopt;
  std::vector<NvmlDeviceState> out;
  for (unsigned i = 0; i < count && i < 1024; ++i) {
    NvmlDeviceState state;
    state.index = i;
    nvmlDevice_t d = nullptr;
    state.error = nvml->by_index(i, &d);
    if (state.error == NVML_SUCCESS && d != nullptr) {
      union {
        nvmlPciInfo_t info;
        char room[512];
      } pci{};
      if (nvml->pci_info && nvml->pci_info(d, &pci.info) == NVML_SUCCESS) {
        pci.info.busId[sizeof pci.info.busId - 1] = '\0';
        state.pci_bus_id = nvml_pci_bus_id(pci.info.busId).value_or("");
      }
      char uuid[96] = {};
      if (nvml->uuid && nvml->uuid(d, uuid, sizeof uuid - 1) == NVML_SUCCESS)
        state.uuid = printable(std::string(uuid, strnlen(uuid, sizeof uuid)));
    }
    out.push_back(state);
  }
  return out;
}

std::optional<PcieLink> nvml_current_pcie_link(const std::string& pci_bus_id) {
  const auto [nvml, d, lookup] = look_up(pci_bus_id);
  if (!nvml || !nvml->curr_pcie_generation || !nvml->curr_pcie_width) return std::nullopt;
  PcieLink link;
  if (d == nullptr || nvml->curr_pcie_generation(d, &link.generation) != NVML_SUCCESS ||
      nvml->curr_pcie_width(d, &link.width) != NVML_SUCCESS)
    return std::nullopt;
  return link;
}

std::optional<unsigned> nvml_device_index(const std::string& pci_bus_id) {
  const auto [nvml, device, lookup] = look_up(pci_bus_id);
  if (!nvml || !nvml->device_index) return std::nullopt;
  unsigned index = 0;
  if (device == nullptr || nvml->device_index(device, &index) != NVML_SUCCESS) return std::nullopt;
  return index;
}

std::optional<MemoryUsage> nvml_memory_usage(const std::string& pci_bus_id) {
  const auto [nvml, device, lookup] = look_up(pci_bus_id);
  nvmlMemory_t memory{};
  if (!nvml || device == nullptr || nvml->memory_info(device, &memory) != NVML_SUCCESS)
    return std::nullopt;
  return MemoryUsage{memory.total, memory.free, memory.used};
}

namespace {

// One process query (compute or graphics): asks for the count, then the list, again while
// the list grows between the two calls. nullopt with `why` set where NVML will not say.
std::optional<std::vector<NvmlProcess>> query_processes(const Nvml& nvml, Nvml::ProcessQuery query,
                                                        nvmlDevice_t d, std::string* why) {
  nvmlReturn_t r = NVML_ERROR_INSUFFICIENT_SIZE;
  for (int attempt = 0; attempt < 4 && r == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    unsigned count = 0;
    r = query(d, &count, nullptr);
    if (r == NVML_SUCCESS) return std::vector<NvmlProcess>{};  // none
    if (r != NVML_ERROR_INSUFFICIENT_SIZE) break;
    count += 8;  // room for processes that start between the two calls
    std::vector<nvmlProcessInfo_t> infos(nvml.processes_v1 ? 0 : count);
    std::vector<nvmlProcessInfo_v1_t> infos_v1(nvml.processes_v1 ? count : 0);
    unsigned filled = count;
    r = query(d, &filled, nvml.processes_v1 ? static_cast<void*>(infos_v1.data()) : infos.data());
    if (r != NVML_SUCCESS) continue;
    std::vector<NvmlProcess> out;
    for (unsigned i = 0; i < filled && i < count; ++i) {
      NvmlProcess p;
      p.pid = nvml.processes_v1 ? infos_v1[i].pid : infos[i].pid;
      const unsigned long long used =
          nvml.processes_v1 ? infos_v1[i].usedGpuMemory : infos[i].usedGpuMemory;
      if (used != NVML_VALUE_NOT_AVAILABLE) p.used_memory = used;
      out.push_back(p);
    }
    return out;
  }
  *why = r == NVML_ERROR_NO_PERMISSION   ? "NVML denies the process list (no permission)"
         : r == NVML_ERROR_NOT_SUPPORTED ? "NVML does not list processes for this device"
         : r == NVML_ERROR_INSUFFICIENT_SIZE
             ? "the process list kept growing while read"
             : "NVML's process list failed (nvmlReturn_t " + std::to_string(r) + ")";
  return std::nullopt;
}

}  // namespace

std::optional<NvmlOccupancy> nvml_occupancy(const std::string& pci_bus_id) {
  const auto [nvml, d, lookup] = look_up(pci_bus_id);
  if (!nvml) return std::nullopt;
  NvmlOccupancy o;
  if (d == nullptr) return o;
  o.found = true;
  if (!nvml->compute_processes) {
    o.processes_why_not = "NVML lacks nvmlDeviceGetComputeRunningProcesses";
  } else {
    std::string why;
    auto compute = query_processes(*nvml, nvml->compute_processes, d, &why);
    std::optional<std::vector<NvmlProcess>> graphics = std::vector<NvmlProcess>{};
    if (compute && nvml->graphics_processes)
      graphics = query_processes(*nvml, nvml->graphics_processes, d, &why);
    if (compute && graphics) {
      // One entry per pid: a process with both kinds of context is listed by both queries.
      std::vector<NvmlProcess> all;
      auto add = [&all](const NvmlProcess& p, bool is_compute) {
        for (auto& e : all)
          if (e.pid == p.pid) {
            (is_compute ? e.compute : e.graphics) = true;
            if (!e.used_memory) e.used_memory = p.used_memory;
            return;
          }
        all.push_back(p);
        (is_compute ? all.back().compute : all.back().graphics) = true;
      };
      for (const auto& p : *compute) add(p, true);
      for (const auto& p : *graphics) add(p, false);
      o.processes = std::move(all);
    } else {
      o.processes_why_not = why;
    }
  }
  if (nvml->memory_info_v2) {
    nvmlMemory_v2_t m{};
    m.version = kNvmlMemoryV2;
    if (nvml->memory_info_v2(d, &m) == NVML_SUCCESS) {
      o.memory = MemoryUsage{m.total, m.free, m.used};
      o.used_excludes_reserved = true;
    }
  }
  if (!o.memory) {
    nvmlMemory_t m{};
    if (nvml->memory_info(d, &m) == NVML_SUCCESS) o.memory = MemoryUsage{m.total, m.free, m.used};
  }
  if (nvml->compute_mode) {
    int mode = 0;
    if (nvml->compute_mode(d, &mode) == NVML_SUCCESS && mode >= 0)
      o.compute_mode = static_cast<unsigned>(mode);
  }
  return o;
}

std::optional<NvmlUtilization> nvml_utilization(const std::string& pci_bus_id) {
  const auto [nvml, d, lookup] = look_up(pci_bus_id);
  if (!nvml || !nvml->utilization) return std::nullopt;
  nvmlUtilization_t u{};
  if (d == nullptr || nvml->utilization(d, &u) != NVML_SUCCESS) return std::nullopt;
  return NvmlUtilization{u.gpu, u.memory};
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

void start_nvml() {
  nvml_future();
}

void* detail::nvml_symbol(const char* name) {
  Nvml* nvml = nvml_future().get();
  return nvml->ready ? nvml->library.symbol(name) : nullptr;
}

}  // namespace cudatool
