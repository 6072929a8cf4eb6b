// The device cache's policy: when a kept answer is used, when the driver is asked and the
// entry written again, and what this process answers from. The machine fingerprint
// (machine_fingerprint.hpp), the entry (device_cache_entry.hpp) and the rules over NVML's
// readings (device_cache_readings.hpp) are files of their own; the store under the entry is
// base's (base/cache_store.hpp).
#include "cudatool/device/device_cache.hpp"

#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>

#include "base/phase_trace.hpp"
#include "cudatool/base/test_hooks.hpp"
#include "cudatool/device/attributes.hpp"
#include "cudatool/device/device.hpp"
#include "device/cached_answers.hpp"
#include "device/cuda_attribute.hpp"
#include "device/device_cache_entry.hpp"
#include "device/device_cache_readings.hpp"
#include "device/machine_fingerprint.hpp"
#include "driver/driver_api.hpp"
#include "driver/nvml_inventory.hpp"
#include "driver/nvml_queries.hpp"

namespace cudatool {
namespace {

using detail::DeviceCacheEntry;

// What the warm path spends its time on (bench/devices.sh's figures are whole processes;
// these say which part of one is NVML's, which the entry's).
PhaseTrace& device_trace() {
  static PhaseTrace trace("CUDATOOL_TEST_DEVICE_CACHE_TRACE");
  return trace;
}
void trace_step(const char* what) {
  device_trace().step(what);
}

// The test suite's view of which path was taken and why (a build with test hooks only).
void trace(const DeviceCacheOutcome& outcome) {
  if (!device_trace().on()) return;
  static constexpr const char* kNames[] = {"off", "hit", "refreshed", "cuinit"};
  trace_step("decided");
  // What the command does after the decision (NVML's live values, the output) starts here.
  std::cerr << "device cache: " << kNames[static_cast<int>(outcome.path)]
            << (outcome.why.empty() ? "" : " (" + outcome.why + ")") << " ["
            << device_trace().take() << " ]\n";
  // Once per process: the Python module decides again on every call.
  static const bool at_exit = std::atexit([] {
                                trace_step("exit");
                                std::fprintf(stderr, "device cache: after the decision [%s ]\n",
                                             device_trace().take().c_str());
                              }) == 0;
  (void)at_exit;
}

bool truthy(const char* value) {
  return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

// ---- the driver's answers ----------------------------------------------------------------

// The file the loader opened for libcuda (its path as the loader names it).
std::string loaded_libcuda_path() {
  const driver::Api& api = driver::api();
  Dl_info info{};
  if (api.cuInit && ::dladdr(reinterpret_cast<void*>(api.cuInit), &info) != 0 && info.dli_fname)
    return info.dli_fname;
  return "";
}

// Everything the cached commands ask the driver, through the driver (cuInit).
DeviceSnapshot read_snapshot() {
  DeviceSnapshot snapshot;
  const std::vector<Device> devices = Device::all();
  snapshot.cuda_version = driver::api().driver_version;
  for (const Device& device : devices) {
    CachedDevice c;
    c.name = device.name();
    c.pci_bus_id = device.pci_bus_id();
    c.uuid = device.uuid();
    c.total_memory = device.total_memory();
    for (const AttributeInfo& info : device_attributes()) {
      int value = 0;
      const CUresult r =
          CUDATOOL_CU_RESULT(cuDeviceGetAttribute, &value, to_cu(info.attribute), device.handle());
      if (r == CUDA_SUCCESS)
        c.attributes.emplace_back(static_cast<int>(info.attribute), value);
      else
        c.rejected.emplace_back(static_cast<int>(info.attribute), static_cast<int>(r));
    }
    snapshot.devices.push_back(std::move(c));
  }
  snapshot.peer_access.assign(devices.size(), std::vector<bool>(devices.size(), false));
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (std::size_t j = 0; j < devices.size(); ++j)
      if (i != j) snapshot.peer_access[i][j] = devices[i].can_access_peer(devices[j]);
  return snapshot;
}

// ---- the process's state -----------------------------------------------------------------

struct State {
  std::mutex mutex;
  std::optional<DeviceCacheEntry> entry;  // set on a hit
  std::map<std::string, bool> unchanged;  // reading name -> every GPU's reading unchanged
};

State& state() {
  static State& s = *new State;
  return s;
}

// Whether `reading` is unchanged on every GPU since the entry was written (State locked).
bool reading_unchanged(State& s, const std::string& reading) {
  if (auto it = s.unchanged.find(reading); it != s.unchanged.end()) return it->second;
  // A setting every GPU lacks cannot change under the same driver and GPUs.
  bool same = detail::unsupported_everywhere(s.entry->nvml, reading);
  if (!same) {
    // This reading alone, live: a command asks for one or two (MIG mode to enumerate, ECC
    // for the memory total), and each is an NVML query per GPU.
    trace_step(("nvml-" + reading).c_str());
    const std::string_view wanted[] = {reading};
    const auto live = nvml_inventory(wanted);
    trace_step("nvml-read");
    same = live && detail::same_readings(s.entry->nvml, live->gpus, reading);
  }
  s.unchanged[reading] = same;
  return same;
}

// The cuInit path with the entry written where it can be: the NVML readings and the
// fingerprint are taken before and after the driver's answers, and the entry is written
// only where they did not change in between (a setting changed meanwhile is not kept).
DeviceCacheOutcome refresh(int dir, const std::string& key,
                           const std::vector<std::string>& environment) {
  DeviceCacheOutcome outcome{DeviceCachePath::cuinit, ""};
  const auto before = nvml_inventory();
  if (!before) {
    std::string why;
    outcome.why = nvml_available(&why) ? "NVML cannot list the GPUs" : "no NVML: " + why;
    return outcome;
  }
  for (const NvmlGpu& gpu : before->gpus)
    if (detail::mig_enabled(gpu)) {
      outcome.why = "a GPU is in MIG mode";
      return outcome;
    }
  std::string why;
  std::optional<std::string> machine_before = detail::machine_lines(&*before, why);
  if (!machine_before) {
    outcome.why = why;
    return outcome;
  }
  DeviceCacheEntry entry;
  try {
    entry.snapshot = read_snapshot();
    entry.libcuda_path = loaded_libcuda_path();
  } catch (const std::exception& e) {
    // The command's own calls meet the same error and report it.
    outcome.why = std::string("the driver: ") + e.what();
    return outcome;
  }
  if (entry.libcuda_path.empty()) {
    outcome.why = "cannot tell which file libcuda is";
    return outcome;
  }
  // The driver answers as it started: a process that changed CUDA_VISIBLE_DEVICES (or
  // another setting) since then must not file those answers under the new setting.
  if (const auto* started = driver::start_environment();
      started && detail::environment_lines(started) != environment) {
    outcome.why = "the driver started under another environment";
    return outcome;
  }
  const auto after = nvml_inventory();
  const auto machine_after = detail::machine_lines(after ? &*after : nullptr, why);
  if (!after || !machine_after || *machine_after != *machine_before) {
    outcome.why = "the machine changed while it was read";
    return outcome;
  }
  for (const std::string reading : {"mig", "ecc", "compute_mode", "display"})
    if (!detail::same_readings(before->gpus, after->gpus, reading)) {
      outcome.why = "a setting changed while it was read";
      return outcome;
    }
  const auto fingerprint_after =
      detail::compose_fingerprint(*machine_after, environment, entry.libcuda_path);
  entry.fingerprint = fingerprint_after;
  entry.nvml = after->gpus;
  if (const int error =
          detail::write_device_cache_file(dir, key, detail::encode_device_cache_entry(entry, key));
      error != 0) {
    outcome.why = std::string("cannot write the entry: ") + std::strerror(error);
    return outcome;
  }
  outcome.path = DeviceCachePath::refreshed;
  return outcome;
}

DeviceCacheOutcome choose(bool fresh, std::string_view fresh_source) {
  DeviceCacheOutcome outcome;
  // A driver named by CUDATOOL_LIBCUDA (tests' fake driver, a driver being tried) answers
  // as its own settings say, which nothing here can see: it is asked every time. The test
  // suite lets its fake driver be cached (its settings then match the fake /proc).
  if (const char* libcuda = std::getenv("CUDATOOL_LIBCUDA");
      libcuda && *libcuda && !test_hook("CUDATOOL_TEST_DEVICE_CACHE_WITH_LIBCUDA")) {
    outcome.why = "CUDATOOL_LIBCUDA is set";
    return outcome;
  }
  if (truthy(std::getenv("CUDATOOL_NO_NVML"))) {
    outcome.why = "CUDATOOL_NO_NVML is set";
    return outcome;
  }
  const UniqueFd dir = detail::open_device_cache_directory(outcome.why);
  if (!dir) return outcome;
  const std::vector<std::string> environment = detail::environment_lines();
  trace_step("start");
  const std::string key = detail::device_cache_key(environment);
  trace_step("name");
  if (fresh || truthy(std::getenv("CUDATOOL_FRESH"))) {
    const std::string asked(fresh ? fresh_source : "CUDATOOL_FRESH");
    outcome = refresh(dir.get(), key, environment);
    if (outcome.path == DeviceCachePath::cuinit) outcome.why = asked + "; " + outcome.why;
    if (outcome.path == DeviceCachePath::refreshed) outcome.why = asked;
    return outcome;
  }
  std::string why;
  trace_step("entry");
  auto bytes = detail::read_device_cache_file(dir.get(), key, why);
  // /proc names the GPUs without NVML; without /proc, NVML does.
  const bool proc_has_gpus =
      bytes &&
      !detail::sorted_entries(detail::system_path("/proc/driver/nvidia") + "/gpus").empty();
  // Where NVML will be asked (no /proc, or MIG mode on GPUs that have it), its start (most
  // of a hit's time on such a machine) runs beside the checksum and the fingerprint.
  const auto start_nvml_if_asked = [&](const DeviceCacheEntry& unverified) {
    bool mig_somewhere = false;
    for (const NvmlGpu& gpu : unverified.nvml)
      mig_somewhere = mig_somewhere || !gpu.readings.count("mig") ||
                      !nvml_not_supported(gpu.readings.at("mig"));
    if (!proc_has_gpus || mig_somewhere) start_nvml();
  };
  std::optional<DeviceCacheEntry> entry =
      bytes ? detail::decode_device_cache_entry(*bytes, key, why, start_nvml_if_asked)
            : std::nullopt;
  trace_step("parsed");
  if (entry) {
    std::optional<NvmlInventory> nvml;
    if (!proc_has_gpus) nvml = nvml_inventory({});
    const auto now =
        detail::fingerprint(nvml ? &*nvml : nullptr, entry->libcuda_path, environment, why);
    trace_step("fingerprint");
    if (!now) {
      entry.reset();
    } else if (*now != entry->fingerprint) {
      why = "the machine, driver or environment changed";
      entry.reset();
    }
    if (entry) {
      State& s = state();
      std::lock_guard lock(s.mutex);
      s.entry = std::move(entry);
      // Readings are live for this lookup only: the Python module looks up again on every
      // call, and a setting changed since its last call must be read again.
      s.unchanged.clear();
      // Enumeration depends on MIG mode on GPUs that have it.
      if (reading_unchanged(s, "mig")) {
        outcome.path = DeviceCachePath::hit;
        return outcome;
      }
      why = "MIG mode changed or cannot be read";
      s.entry.reset();
    }
  }
  outcome = refresh(dir.get(), key, environment);
  if (outcome.path == DeviceCachePath::refreshed) outcome.why = why;
  if (outcome.path == DeviceCachePath::cuinit) outcome.why = why + "; " + outcome.why;
  return outcome;
}

}  // namespace

DeviceCacheOutcome use_device_cache(bool fresh, std::string_view fresh_source) {
  DeviceCacheOutcome outcome;
  try {
    outcome = choose(fresh, fresh_source);
  } catch (const std::exception& e) {
    // Never worse than without the cache: the cuInit path.
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.entry.reset();
    outcome = {DeviceCachePath::cuinit, std::string("cache error: ") + e.what()};
  }
  trace(outcome);
  return outcome;
}

const DeviceSnapshot* cached_devices() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.entry ? &s.entry->snapshot : nullptr;
}

namespace detail {

std::optional<CachedAttribute> cached_attribute(int ordinal, DeviceAttribute attribute) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.entry || ordinal < 0 ||
      static_cast<std::size_t>(ordinal) >= s.entry->snapshot.devices.size())
    return std::nullopt;
  if (const auto reading = detail::reading_for(attribute);
      reading && !reading_unchanged(s, *reading))
    return std::nullopt;
  const CachedDevice& d = s.entry->snapshot.devices[static_cast<std::size_t>(ordinal)];
  for (const auto& [a, v] : d.attributes)
    if (a == static_cast<int>(attribute)) return CachedAttribute{false, v};
  for (const auto& [a, r] : d.rejected)
    if (a == static_cast<int>(attribute)) return CachedAttribute{true, r};
  return std::nullopt;
}

std::optional<std::uint64_t> cached_total_memory(int ordinal) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.entry || ordinal < 0 ||
      static_cast<std::size_t>(ordinal) >= s.entry->snapshot.devices.size())
    return std::nullopt;
  // ECC on reserves memory on some GPUs.
  if (!reading_unchanged(s, "ecc")) return std::nullopt;
  return s.entry->snapshot.devices[static_cast<std::size_t>(ordinal)].total_memory;
}

}  // namespace detail
}  // namespace cudatool
