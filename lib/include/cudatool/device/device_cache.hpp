// The device cache: `devices`, `attrs` and `occupancy --device` without cuInit.
//
// cuInit costs 100-250 ms; nvidia-smi never calls it. What only the CUDA driver knows (its
// ordinal order after CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER, names, memory totals,
// every attribute, peer access) is kept from the last run that called cuInit, in a per-user
// cache ($XDG_CACHE_HOME/cudatool/devices, else ~/.cache/cudatool/devices; a directory of
// mode 0700, entries of mode 0600). A kept answer is used only while everything it depends
// on is unchanged, and the process then never loads libcuda:
//  - the machine: the boot (boot id), the driver (/proc/driver/nvidia/version and params,
//    the nvidia kernel modules loaded), the GPUs there now and their PCI locations
//    (/proc/driver/nvidia/gpus/*/information whole, or NVML's bus ids and UUIDs where /proc
//    has no GPUs), their device nodes and whether this user may open them;
//  - the driver library: the file dlopen("libcuda.so.1") loaded (its identity: device,
//    inode, size, times) and what the loader's search depends on (/etc/ld.so.cache, each
//    LD_LIBRARY_PATH directory's libcuda.so.1), and this executable's identity;
//  - the environment that shapes enumeration: every CUDA_* variable (CUDA_VISIBLE_DEVICES,
//    CUDA_DEVICE_ORDER, CUDA_MPS_*, ...) except cudatool's own CUDA_DEVICE, __NV*, LD_*.
//    Each environment has an entry of its own (the file is named by its digest);
//  - settings that change while the machine runs, read live through NVML and compared with
//    the readings kept beside the answers: MIG mode (enumeration; on GPUs that have it), ECC
//    mode (memory total, ecc_enabled), compute mode (compute_mode), display mode and
//    activity (kernel_exec_timeout). A GPU in MIG mode, a running MPS server (its control
//    pipe) or no NVML: nothing is kept.
// Anything else is the cuInit path: no entry, a damaged, truncated, foreign-owned,
// symbolically linked, group- or world-accessible or future-format entry, a fingerprint that
// differs in any line, a live reading that differs, a device the entry lacks. That path
// answers through the driver as before and writes the entry again (atomically: a temporary
// file renamed into place, so concurrent runs read a whole entry or none).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

// What the driver answered for one device, in its ordinal order.
struct CachedDevice {
  std::string name;
  std::string pci_bus_id;  // as Device::pci_bus_id
  std::string uuid;        // as Device::uuid
  std::uint64_t total_memory = 0;
  // Each attribute of the table (attributes.hpp) by its enumerator value: the value, or the
  // CUresult with which the driver rejected it.
  std::vector<std::pair<int, int>> attributes;  // {attribute, value}
  std::vector<std::pair<int, int>> rejected;    // {attribute, CUresult}
};

struct DeviceSnapshot {
  int cuda_version = 0;  // cuDriverGetVersion
  std::vector<CachedDevice> devices;
  std::vector<std::vector<bool>> peer_access;  // [i][j], every pair (false on the diagonal)
};

enum class DeviceCachePath {
  off,        // the cache is not used (no cache directory, CUDATOOL_LIBCUDA, ...): cuInit
  hit,        // answers come from the cache; libcuda is not loaded
  refreshed,  // cuInit path; the entry was written
  cuinit,     // cuInit path; nothing written (why says why)
};

struct DeviceCacheOutcome {
  DeviceCachePath path = DeviceCachePath::off;
  std::string why;  // for a path other than hit: the first reason
};

// Chooses where this process's Device answers come from: the cache entry when it is valid,
// otherwise the driver (and then the entry is written for the next run). `fresh` (the
// caller's choice, named `fresh_source` in the outcome's why: cudatool's --fresh), or
// CUDATOOL_FRESH=1 in the environment, skips the lookup. Call it once, before any other
// device call, in a command that creates no context. Never throws: every failure of the
// cache is the cuInit path. Errors of the driver itself (no driver, no device) are left to
// the command's own calls, which then meet them exactly as without the cache.
DeviceCacheOutcome use_device_cache(bool fresh, std::string_view fresh_source);

// The snapshot Device answers from, or nullptr on the cuInit path.
const DeviceSnapshot* cached_devices();

}  // namespace cudatool

namespace cudatool::detail {

// The entry parser, for the fuzz harness (fuzz/device_cache_entry.cpp): nullopt unless
// `bytes` is a whole entry of this format (header, checksum, payload); otherwise the entry
// written again by the writer. The same for the JSON payload alone.
std::optional<std::string> reformat_device_cache_entry(std::string_view bytes);
std::optional<std::string> reformat_device_cache_payload(std::string_view payload);

}  // namespace cudatool::detail
