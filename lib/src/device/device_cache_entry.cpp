#include "device/device_cache_entry.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "base/cache_store.hpp"
#include "base/json_read.hpp"

namespace cudatool::detail {
namespace {

constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{4} << 20;
constexpr std::string_view kExtension = ".entry";

}  // namespace

std::string encode_device_cache_payload(const DeviceCacheEntry& e) {
  nlohmann::json j;
  j["fingerprint"] = e.fingerprint;
  j["libcuda"] = e.libcuda_path;
  j["nvml"] = nlohmann::json::array();
  for (const NvmlGpu& g : e.nvml)
    j["nvml"].push_back({{"pci_bus_id", g.pci_bus_id}, {"uuid", g.uuid}, {"readings", g.readings}});
  j["cuda_version"] = e.snapshot.cuda_version;
  j["devices"] = nlohmann::json::array();
  for (const CachedDevice& d : e.snapshot.devices)
    j["devices"].push_back({{"name", d.name},
                            {"pci_bus_id", d.pci_bus_id},
                            {"uuid", d.uuid},
                            {"total_memory", d.total_memory},
                            {"attributes", d.attributes},
                            {"rejected", d.rejected}});
  j["peer_access"] = e.snapshot.peer_access;
  // Strict: a name that is not UTF-8 throws, and nothing is written (use_device_cache
  // takes the cuInit path) rather than keeping a name other than the driver's bytes.
  return j.dump();
}

// The entry's JSON payload; nullopt for anything of another shape.
std::optional<DeviceCacheEntry> decode_device_cache_payload(std::string_view payload,
                                                            std::string& why) {
  try {
    const nlohmann::json j = nlohmann::json::parse(payload);
    DeviceCacheEntry e;
    e.fingerprint = j.at("fingerprint").get<std::string>();
    e.libcuda_path = j.at("libcuda").get<std::string>();
    for (const auto& g : j.at("nvml"))
      e.nvml.push_back({g.at("pci_bus_id").get<std::string>(), g.at("uuid").get<std::string>(),
                        g.at("readings").get<std::map<std::string, std::string>>()});
    e.snapshot.cuda_version = detail::json_integer<int>(j.at("cuda_version"));
    for (const auto& d : j.at("devices")) {
      CachedDevice c;
      c.name = d.at("name").get<std::string>();
      c.pci_bus_id = d.at("pci_bus_id").get<std::string>();
      c.uuid = d.at("uuid").get<std::string>();
      c.total_memory = detail::json_integer<std::uint64_t>(d.at("total_memory"));
      c.attributes = detail::json_int_pairs(d.at("attributes"));
      c.rejected = detail::json_int_pairs(d.at("rejected"));
      e.snapshot.devices.push_back(std::move(c));
    }
    e.snapshot.peer_access = j.at("peer_access").get<std::vector<std::vector<bool>>>();
    const std::size_t n = e.snapshot.devices.size();
    bool square = e.snapshot.peer_access.size() == n;
    for (const auto& row : e.snapshot.peer_access) square = square && row.size() == n;
    if (n == 0 || n > 4096 || !square) {
      why = "entry damaged (shape)";
      return std::nullopt;
    }
    return e;
  } catch (const std::exception&) {
    why = "entry damaged (content)";
    return std::nullopt;
  }
}

// std::hash, not SHA-256: OpenSSL's start (about 1 ms on the H100 host) would come before
// NVML's. Only where to look: the entry's fingerprint holds the environment itself, so two
// environments of one key take turns in it and never use each other's answers.
std::string device_cache_key(const std::vector<std::string>& environment) {
  std::string joined;
  for (const auto& line : environment) joined += line + "\n";
  char key[24];
  std::snprintf(key, sizeof key, "%016llx",
                static_cast<unsigned long long>(std::hash<std::string>{}(joined)));
  return key;
}

std::string device_cache_file_name(const std::string& key) {
  return key + std::string(kExtension);
}

std::string encode_device_cache_entry(const DeviceCacheEntry& entry, std::string_view key) {
  return encode_cache_entry(key, encode_device_cache_payload(entry));
}

std::optional<DeviceCacheEntry> decode_device_cache_entry(
    std::string_view bytes, std::string_view key, std::string& why,
    const std::function<void(const DeviceCacheEntry&)>& unverified) {
  DecodedCacheEntry decoded = decode_cache_entry_unverified(bytes, key);
  switch (decoded.damage) {
    case CacheEntryDamage::none:
      break;
    case CacheEntryDamage::header:
      why = "entry damaged (no header)";
      return std::nullopt;
    case CacheEntryDamage::format:
      why = "entry of another format";
      return std::nullopt;
    case CacheEntryDamage::fields:
      why = "entry damaged (header)";
      return std::nullopt;
    case CacheEntryDamage::key:
      why = "entry of another key";
      return std::nullopt;
    case CacheEntryDamage::size:
      why = "entry truncated";
      return std::nullopt;
    case CacheEntryDamage::checksum:
      break;
  }
  std::string payload_why;
  std::optional<DeviceCacheEntry> entry = decode_device_cache_payload(decoded.payload, payload_why);
  if (entry && unverified) unverified(*entry);
  if (!verify_cache_entry(decoded)) {
    why = "entry damaged (checksum)";
    return std::nullopt;
  }
  if (!entry) why = payload_why;
  return entry;
}

UniqueFd open_device_cache_directory(std::string& why) {
  const CacheHome home = cache_home();
  if (home.variable.empty() || !home.value.is_absolute()) {
    why = "no cache directory (neither an absolute XDG_CACHE_HOME nor HOME)";
    return UniqueFd();
  }
  // XDG: the cache home is created where missing, 0700.
  if (home.variable == "HOME") ::mkdir(home.dir.c_str(), 0700);
  UniqueFd dir = open_cache_directory(home.dir);
  for (const char* component : {"cudatool", "devices"}) {
    if (!dir) break;
    if (::mkdirat(dir.get(), component, 0700) != 0 && errno != EEXIST) {
      why = std::string("cannot create the cache directory: ") + std::strerror(errno);
      return UniqueFd();
    }
    dir = open_directory_at(dir.get(), component);
  }
  if (!dir) {
    why = "cannot open the cache directory " + home.dir.string() + "/cudatool/devices";
    return UniqueFd();
  }
  struct stat s {};
  const bool stat_failed = ::fstat(dir.get(), &s) != 0;
  const auto distrust = untrusted(s, kTrustPrivate);
  if (stat_failed || (distrust && distrust->reason == CacheDistrust::Reason::owner)) {
    why = "the cache directory is not this user's";
    return UniqueFd();
  }
  // Open to others (made under a umask of 0): this user's alone again.
  if (distrust && ::fchmod(dir.get(), 0700) != 0) {
    why = "the cache directory is open to others";
    return UniqueFd();
  }
  return dir;
}

std::optional<std::string> read_device_cache_file(int dir, const std::string& key,
                                                  std::string& why) {
  const CacheFile file = open_cache_file_at(dir, device_cache_file_name(key));
  if (!file.fd) {
    why = file.error == ELOOP ? "entry is a symbolic link" : "no entry";
    return std::nullopt;
  }
  if (!S_ISREG(file.info.st_mode)) {
    why = "entry is not a regular file";
    return std::nullopt;
  }
  if (const auto distrust = untrusted(file.info, kTrustPrivate)) {
    why = distrust->reason == CacheDistrust::Reason::owner ? "entry is another user's"
                                                           : "entry is open to others";
    return std::nullopt;
  }
  if (static_cast<std::uint64_t>(file.info.st_size) > kMaxEntryBytes) {
    why = "entry too large";
    return std::nullopt;
  }
  auto data = read_cache_file(file, kMaxEntryBytes);
  if (!data) why = "entry truncated";
  return data;
}

int write_device_cache_file(int dir, const std::string& key, std::string_view data) {
  return write_cache_file_at(dir, device_cache_file_name(key), data).error;
}

// The fuzz harness's round trips (declared in device_cache.hpp).
std::optional<std::string> reformat_device_cache_entry(std::string_view bytes) {
  std::string why;
  const std::string key(claimed_cache_key(bytes));
  const auto entry = decode_device_cache_entry(bytes, key, why);
  return entry ? std::optional<std::string>(encode_device_cache_entry(*entry, key)) : std::nullopt;
}

std::optional<std::string> reformat_device_cache_payload(std::string_view payload) {
  std::string why;
  const auto entry = decode_device_cache_payload(payload, why);
  return entry ? std::optional<std::string>(encode_device_cache_payload(*entry)) : std::nullopt;
}

}  // namespace cudatool::detail
