// Internal: the device cache's entry: what is kept (the driver's answers, the NVML readings
// taken with them, the fingerprint they are valid for), its JSON payload, and its file in
// the cache directory. The header, checksum, trust checks and atomic write are the cache
// store's (base/cache_store.hpp), as for every cache of cudatool.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.hpp"
#include "cudatool/device/device_cache.hpp"
#include "driver/nvml_inventory.hpp"

namespace cudatool::detail {

struct DeviceCacheEntry {
  std::string fingerprint;  // machine_fingerprint.hpp's fingerprint()
  std::string libcuda_path;
  std::vector<NvmlGpu> nvml;  // the readings taken with the snapshot
  DeviceSnapshot snapshot;
};

// The payload, JSON. Throws for a name that is not UTF-8 (nothing is then written).
std::string encode_device_cache_payload(const DeviceCacheEntry& entry);
// The payload's entry; nullopt (with `why`) for anything of another shape.
std::optional<DeviceCacheEntry> decode_device_cache_payload(std::string_view payload,
                                                            std::string& why);

// The entry's key: one per environment that shapes enumeration (16 hex digits), and its
// file's name ("<key>.entry").
std::string device_cache_key(const std::vector<std::string>& environment);
std::string device_cache_file_name(const std::string& key);

// The entry file's bytes for `key` (the cache store's header and the payload).
std::string encode_device_cache_entry(const DeviceCacheEntry& entry, std::string_view key);
// The entry in `bytes` for `key`, or nullopt (with `why`) for anything not written whole by
// this format. `unverified` (where given) sees the entry before its checksum is computed:
// the lookup starts NVML from it, so that OpenSSL's start and the digest run beside NVML's.
std::optional<DeviceCacheEntry> decode_device_cache_entry(
    std::string_view bytes, std::string_view key, std::string& why,
    const std::function<void(const DeviceCacheEntry&)>& unverified = {});

// The cache directory, opened (never through a symbolic link) and created where missing:
// <cache home>/cudatool/devices (cache_store.hpp's cache_home(), with an absolute HOME). The
// last two components are this user's, mode 0700 (made so where open to others).
UniqueFd open_device_cache_directory(std::string& why);
// The entry file's bytes, or nullopt (with `why`): none, a symbolic link, not a regular
// file, another user's, open to others, too large, or short.
std::optional<std::string> read_device_cache_file(int dir, const std::string& key,
                                                  std::string& why);
// Writes the entry file atomically (a reader sees the old entry or the new one, whole);
// 0, or the errno.
int write_device_cache_file(int dir, const std::string& key, std::string_view data);

}  // namespace cudatool::detail
