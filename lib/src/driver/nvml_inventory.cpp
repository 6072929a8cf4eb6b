#include "driver/nvml_inventory.hpp"

#include <algorithm>
#include <cstring>

#include "driver/nvml_symbol.hpp"

namespace cudatool {
namespace {

// The declarations used, from NVML's API reference (nvml.h is not everywhere).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
// nvmlFieldValue_t, with the value union as the unsigned long long it holds for the ECC
// fields (NVML_FI_DEV_ECC_CURRENT 1 and NVML_FI_DEV_ECC_PENDING 2: 1 active, 0 inactive).
struct nvmlFieldValue_t {
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  unsigned long long value;
};
constexpr unsigned NVML_FI_DEV_ECC_CURRENT = 1, NVML_FI_DEV_ECC_PENDING = 2;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;

template <class Fn>
Fn entry(const char* name) {
  return reinterpret_cast<Fn>(detail::nvml_symbol(name));
}

// "result:v1,v2": the values only where the query succeeded.
NvmlReading reading(nvmlReturn_t result, std::initializer_list<long long> values) {
  std::string text = std::to_string(result) + ":";
  if (result != NVML_SUCCESS) return text;
  bool first = true;
  for (const long long v : values) {
    if (!first) text += ',';  // appended apart: GCC 12 -O3's -Wrestrict false positive
    text += std::to_string(v);
    first = false;
  }
  return text;
}

// A C string from a buffer NVML may leave unterminated.
std::string bounded(const char* buffer, std::size_t size) {
  return std::string(buffer, strnlen(buffer, size));
}

using Count = nvmlReturn_t (*)(unsigned*);
using ByIndex = nvmlReturn_t (*)(unsigned, nvmlDevice_t*);
using Pci = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using Text = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned);
using TwoUnsigned = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, unsigned*);
using TwoInt = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);
using OneInt = nvmlReturn_t (*)(nvmlDevice_t, int*);
using Version = nvmlReturn_t (*)(char*, unsigned);
using Fields = nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*);

// A missing query is a reading of its own ("-1:"), never a guess.
constexpr nvmlReturn_t kMissing = -1;

// NVML's entry points for the inventory: the first five are needed, the rest are readings'
// and may be missing (nullptr).
struct Queries {
  Count count;
  ByIndex by_index;
  Pci pci;
  Text uuid;
  Version version;
  TwoUnsigned mig;
  TwoInt ecc;
  Fields fields;
  OneInt compute;
  OneInt display_mode;
  OneInt display_active;
};

std::optional<Queries> resolve_queries() {
  Queries q;
  q.count = entry<Count>("nvmlDeviceGetCount_v2");
  q.by_index = entry<ByIndex>("nvmlDeviceGetHandleByIndex_v2");
  q.pci = entry<Pci>("nvmlDeviceGetPciInfo_v3");
  q.uuid = entry<Text>("nvmlDeviceGetUUID");
  q.version = entry<Version>("nvmlSystemGetDriverVersion");
  if (!q.count || !q.by_index || !q.pci || !q.uuid || !q.version) return std::nullopt;
  q.mig = entry<TwoUnsigned>("nvmlDeviceGetMigMode");
  q.ecc = entry<TwoInt>("nvmlDeviceGetEccMode");
  q.fields = entry<Fields>("nvmlDeviceGetFieldValues");
  q.compute = entry<OneInt>("nvmlDeviceGetComputeMode");
  q.display_mode = entry<OneInt>("nvmlDeviceGetDisplayMode");
  q.display_active = entry<OneInt>("nvmlDeviceGetDisplayActive");
  return q;
}

// The ECC modes (current, pending).
NvmlReading ecc_reading(const Queries& q, nvmlDevice_t device) {
  if (q.fields) {
    // The same two modes as nvmlDeviceGetEccMode, in a third of its time on an H100 (0.75
    // against 1.9-2.2 ms: bench/RESULTS.md); the first failure is the reading's result.
    nvmlFieldValue_t values[2] = {};
    values[0].fieldId = NVML_FI_DEV_ECC_CURRENT;
    values[1].fieldId = NVML_FI_DEV_ECC_PENDING;
    nvmlReturn_t result = q.fields(device, 2, values);
    for (const nvmlFieldValue_t& v : values)
      if (result == NVML_SUCCESS) result = v.nvmlReturn;
    if (result != NVML_ERROR_NOT_SUPPORTED)
      return reading(result, {static_cast<long long>(values[0].value),
                              static_cast<long long>(values[1].value)});
  }
  // An NVML without the ECC fields (no nvmlDeviceGetFieldValues, or one that does not support
  // them): nvmlDeviceGetEccMode, which may still know the modes.
  int on = 0, on_pending = 0;
  const nvmlReturn_t result = q.ecc ? q.ecc(device, &on, &on_pending) : kMissing;
  return reading(result, {on, on_pending});
}

// The named readings of one GPU. Each query runs before its values are read into the
// reading.
void read_settings(const Queries& q, nvmlDevice_t device,
                   std::span<const std::string_view> readings, NvmlGpu& gpu) {
  const auto wanted = [&](std::string_view name) {
    return std::ranges::find(readings, name) != readings.end();
  };
  if (wanted("mig")) {
    unsigned current = 0, pending = 0;
    const nvmlReturn_t result = q.mig ? q.mig(device, &current, &pending) : kMissing;
    gpu.readings["mig"] = reading(result, {current, pending});
  }
  if (wanted("ecc")) gpu.readings["ecc"] = ecc_reading(q, device);
  if (wanted("compute_mode")) {
    int mode = 0;
    const nvmlReturn_t result = q.compute ? q.compute(device, &mode) : kMissing;
    gpu.readings["compute_mode"] = reading(result, {mode});
  }
  if (wanted("display")) {
    int shown = 0, active = 0;
    const nvmlReturn_t shown_result = q.display_mode ? q.display_mode(device, &shown) : kMissing;
    const nvmlReturn_t active_result =
        q.display_active ? q.display_active(device, &active) : kMissing;
    gpu.readings["display"] =
        reading(shown_result, {shown}) + ";" + reading(active_result, {active});
  }
}

}  // namespace

bool nvml_not_supported(const NvmlReading& r) {
  return r == std::to_string(NVML_ERROR_NOT_SUPPORTED) + ":";
}

std::optional<NvmlInventory> nvml_inventory(std::span<const std::string_view> readings) {
  const std::optional<Queries> q = resolve_queries();
  if (!q) return std::nullopt;
  NvmlInventory inventory;
  char text[96] = {};
  if (q->version(text, sizeof text - 1) != NVML_SUCCESS) return std::nullopt;
  inventory.driver_version = bounded(text, sizeof text);
  unsigned n = 0;
  if (q->count(&n) != NVML_SUCCESS || n > 1024) return std::nullopt;
  for (unsigned i = 0; i < n; ++i) {
    // Which GPU it is: a GPU NVML cannot name makes no inventory.
    nvmlDevice_t device = nullptr;
    if (q->by_index(i, &device) != NVML_SUCCESS) return std::nullopt;
    NvmlGpu gpu;
    nvmlPciInfo_t info{};
    if (q->pci(device, &info) != NVML_SUCCESS) return std::nullopt;
    gpu.pci_bus_id = bounded(info.busId, sizeof info.busId);
    std::memset(text, 0, sizeof text);
    if (q->uuid(device, text, sizeof text - 1) != NVML_SUCCESS) return std::nullopt;
    gpu.uuid = bounded(text, sizeof text);
    read_settings(*q, device, readings, gpu);
    inventory.gpus.push_back(std::move(gpu));
  }
  return inventory;
}

}  // namespace cudatool
