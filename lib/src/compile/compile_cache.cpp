#include "cudatool/compile/compile_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <system_error>
#include <utility>

#include "base/cache_store.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/units.hpp"

namespace cudatool {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kExtension = ".entry";
constexpr const char* kVersionDir = "v2";
constexpr std::uint64_t kMaxEntryBytes = 1ull << 30;
// A store writes its temporary in well under a second; one older than this was left by a
// process that died, and --cache-clear removes it.
constexpr std::int64_t kAbandonedTemporaryNs = std::int64_t{3600} * 1000000000;

bool truthy(const char* value) {
  if (value == nullptr) return false;
  std::string v = value;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
  return !(v.empty() || v == "0" || v == "false" || v == "no" || v == "off");
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

bool valid_key(std::string_view key) {
  return key.size() == 64 && valid_cache_key(key);
}

// "<key>.entry" in directory "<first two digits>".
bool entry_name(std::string_view dir, std::string_view name) {
  return name.size() == 64 + kExtension.size() && name.substr(64) == kExtension &&
         valid_key(name.substr(0, 64)) && name.substr(0, 2) == dir;
}

// A store's temporary (the store's ".<key>.entry.<pid>.<n>.tmp", or "<key>.entry.tmp.<...>"
// of versions before the one cache store).
bool temporary_name(std::string_view dir, std::string_view name) {
  const std::string_view tag = ".entry.tmp.";
  if (name.size() > 64 + tag.size() && name.substr(64, tag.size()) == tag)
    return valid_key(name.substr(0, 64)) && name.substr(0, 2) == dir;
  return name.size() > 1 + 64 + kExtension.size() &&
         is_temporary_for(name, std::string(name.substr(1, 64)) + std::string(kExtension)) &&
         valid_key(name.substr(1, 64)) && name.substr(1, 2) == dir;
}

struct EntryFile {
  std::string dir;   // "ab"
  std::string name;  // "<key>.entry"
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  bool temporary = false;
};

// Every regular file named like an entry (or a store's temporary) below v2, and the handles
// of the two-digit directories they are in.
struct Listing {
  std::vector<std::pair<std::string, UniqueFd>> dirs;
  std::vector<EntryFile> files;
  int dir_fd(const std::string& name) const {
    for (const auto& [n, fd] : dirs)
      if (n == name) return fd.get();
    return -1;
  }
};

bool trusted_directory(int fd, bool top) {
  return !untrusted_message(fd, kTrustNotWritableByOthers, top);
}

Listing list_entries(const fs::path& root) {
  Listing listing;
  UniqueFd top = open_cache_directory(root);
  if (!top) return listing;
  UniqueFd version = open_directory_at(top.get(), kVersionDir);
  if (!version || !trusted_directory(top.get(), true) || !trusted_directory(version.get(), false))
    return listing;
  for (const auto& sub : list_directory(version.get())) {
    if (sub.size() != 2 || !valid_cache_key(sub)) continue;
    UniqueFd dir = open_directory_at(version.get(), sub.c_str());
    if (!dir || !trusted_directory(dir.get(), false)) continue;
    for (const auto& name : list_directory(dir.get())) {
      const bool entry = entry_name(sub, name);
      const bool temporary = !entry && temporary_name(sub, name);
      if (!entry && !temporary) continue;
      struct stat info {};
      if (::fstatat(dir.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
          !S_ISREG(info.st_mode) || untrusted(info, kTrustNotWritableByOthers))
        continue;
      listing.files.push_back(
          {sub, name, static_cast<std::uint64_t>(info.st_size),
           static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec,
           temporary});
    }
    listing.dirs.emplace_back(sub, std::move(dir));
  }
  return listing;
}

// True when `path` is a directory (through links: HOME may be one).
bool exists_as_directory(const fs::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

}  // namespace

std::string format_cache_entry(std::string_view key, std::string_view payload) {
  return encode_cache_entry(key, payload);
}

std::optional<std::string_view> parse_cache_entry(std::string_view bytes,
                                                  std::string_view expected_key) {
  if (!valid_key(expected_key)) return std::nullopt;
  const DecodedCacheEntry entry = decode_cache_entry(bytes, expected_key);
  if (!entry.ok()) return std::nullopt;
  return entry.payload;
}

CacheConfig CacheConfig::from_environment(const std::optional<std::string>& dir_flag, bool no_cache,
                                          std::string_view dir_flag_name) {
  CacheConfig config;
  if (dir_flag && !dir_flag->empty()) {
    config.dir = *dir_flag;
  } else if (!env("CUDATOOL_CACHE_DIR").empty()) {
    config.dir = env("CUDATOOL_CACHE_DIR");
  } else if (const CacheHome home = cache_home(); !home.variable.empty()) {
    config.dir = home.dir / "cudatool";
    // XDG_CACHE_HOME or HOME must exist: cudatool creates only what is below it.
    if (!exists_as_directory(home.value)) {
      config.enabled = false;
      config.disabled_by = home.variable;
      config.note = "compile cache off: " + home.variable + "=" + home.value.string() +
                    " is not a directory (cudatool does not create it); set CUDATOOL_CACHE_DIR" +
                    (dir_flag_name.empty() ? "" : " or " + std::string(dir_flag_name)) +
                    " to use one";
    }
  } else {
    config.enabled = false;
    config.disabled_by = "no HOME";
  }
  if (no_cache) {
    config.enabled = false;
    config.disabled_by = "no_cache";
    config.note.clear();
  } else if (truthy(std::getenv("CUDATOOL_DISABLE_CACHE"))) {
    config.enabled = false;
    config.disabled_by = "CUDATOOL_DISABLE_CACHE";
    config.note.clear();
  }
  // Read only for a cache in use: a setting of a cache that is off (--no-cache,
  // CUDATOOL_DISABLE_CACHE) must not fail a compile that uses none.
  if (const std::string size = env("CUDATOOL_CACHE_MAX_SIZE"); !size.empty() && config.enabled)
    config.max_bytes = parse_size(size, "CUDATOOL_CACHE_MAX_SIZE");
  return config;
}

CompileCache::CompileCache(CacheConfig config) : config_(std::move(config)) {}

fs::path CompileCache::entry_path(const std::string& key) const {
  return config_.dir / kVersionDir / key.substr(0, 2) / (key + std::string(kExtension));
}

void CompileCache::disable(const std::string& why) {
  if (broken_) return;
  broken_ = true;
  warnings_.push_back("compile cache disabled: " + why + "; compiling without the cache");
}

bool CompileCache::trusted(int fd, const fs::path& path, bool top) {
  const auto why = untrusted_message(fd, kTrustNotWritableByOthers, top);
  if (why) disable(path.string() + " is " + *why + ", so its entries cannot be trusted");
  return !why;
}

std::optional<std::string> CompileCache::load(const std::string& key) {
  if (!enabled() || !valid_key(key)) return std::nullopt;
  UniqueFd top = open_cache_directory(config_.dir);
  if (!top || !trusted(top.get(), config_.dir, true)) return std::nullopt;
  UniqueFd version = open_directory_at(top.get(), kVersionDir);
  if (!version || !trusted(version.get(), config_.dir / kVersionDir, false)) return std::nullopt;
  const std::string sub = key.substr(0, 2);
  UniqueFd dir = open_directory_at(version.get(), sub.c_str());
  if (!dir || !trusted(dir.get(), config_.dir / kVersionDir / sub, false)) return std::nullopt;
  const std::string name = key + std::string(kExtension);
  CacheFile file = open_cache_file_at(dir.get(), name);
  if (!file.fd) {
    if (file.error != ENOENT) remove_at(dir.get(), name.c_str());  // a link, or unreadable
    return std::nullopt;
  }
  // An entry someone else could have written: a miss (the store replaces it), said once.
  if (const auto why = untrusted(file.info, kTrustNotWritableByOthers)) {
    if (!distrust_warned_) {
      distrust_warned_ = true;
      warnings_.push_back("compile cache: ignored " + entry_path(key).string() + ": " +
                          why->message());
    }
    return std::nullopt;
  }
  const auto data = read_cache_file(file, kMaxEntryBytes);
  const auto entry = data ? decode_cache_entry(*data, key) : DecodedCacheEntry{};
  if (!entry.ok()) {
    // Not a regular file, too large, truncated while read or damaged: it goes.
    file = CacheFile();
    remove_at(dir.get(), name.c_str());
    return std::nullopt;
  }
  ::futimens(file.fd.get(), nullptr);  // recently used
  return std::string(entry.payload);
}

void CompileCache::remove(const std::string& key) {
  if (!valid_key(key)) return;
  UniqueFd top = open_cache_directory(config_.dir);
  if (!top) return;
  UniqueFd version = open_directory_at(top.get(), kVersionDir);
  if (!version) return;
  UniqueFd dir = open_directory_at(version.get(), key.substr(0, 2).c_str());
  if (!dir) return;
  remove_at(dir.get(), (key + std::string(kExtension)).c_str());
}

bool CompileCache::store(const std::string& key, std::string_view payload) {
  if (!enabled() || !valid_key(key)) return false;
  const std::error_code ec = make_private_directories(config_.dir);
  UniqueFd top = open_cache_directory(config_.dir);
  if (!top) {
    disable("cannot use " + config_.dir.string() + " (" +
            (ec ? ec.message() : std::string(std::strerror(errno))) + ")");
    return false;
  }
  if (!trusted(top.get(), config_.dir, true)) return false;
  UniqueFd version = make_directory_at(top.get(), kVersionDir);
  if (version && !trusted(version.get(), config_.dir / kVersionDir, false)) return false;
  const std::string sub = key.substr(0, 2);
  UniqueFd dir = version ? make_directory_at(version.get(), sub.c_str()) : UniqueFd();
  if (!dir) {
    disable("cannot create " + (config_.dir / kVersionDir / sub).string() + " (" +
            std::strerror(errno) + ")");
    return false;
  }
  if (!trusted(dir.get(), config_.dir / kVersionDir / sub, false)) return false;
  const auto written = write_cache_file_at(dir.get(), key + std::string(kExtension),
                                           encode_cache_entry(key, payload));
  if (written.error == 0) {
    if (stats().bytes > config_.max_bytes) trim(config_.max_bytes);
    return true;
  }
  if (!written.created)
    disable("cannot write in " + (config_.dir / kVersionDir / sub).string() + " (" +
            std::strerror(written.error) + ")");
  else if (written.error != ENOENT)  // ENOENT: the temporary went (a clear long after it began)
    disable("cannot write " + entry_path(key).string() + " (" + std::strerror(written.error) + ")");
  return false;
}

CacheStats CompileCache::stats() const {
  CacheStats s;
  s.dir = config_.dir.string();
  s.max_bytes = config_.max_bytes;
  for (const auto& f : list_entries(config_.dir).files) {
    if (f.temporary) continue;
    ++s.entries;
    s.bytes += f.size;
  }
  return s;
}

std::uint64_t CompileCache::clear() {
  std::uint64_t removed = 0;
  const Listing listing = list_entries(config_.dir);
  // A temporary is a store under way, unless it is old: one left by a store that was killed.
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const std::int64_t now_ns = static_cast<std::int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  for (const auto& f : listing.files) {
    if (f.temporary && now_ns - f.mtime_ns < kAbandonedTemporaryNs) continue;
    if (::unlinkat(listing.dir_fd(f.dir), f.name.c_str(), 0) == 0 && !f.temporary) ++removed;
  }
  return removed;
}

std::uint64_t CompileCache::trim(std::uint64_t max_bytes) {
  Listing listing = list_entries(config_.dir);
  std::vector<const EntryFile*> items;
  std::uint64_t total = 0;
  for (const auto& f : listing.files) {
    if (f.temporary) continue;
    total += f.size;
    items.push_back(&f);
  }
  std::sort(items.begin(), items.end(),
            [](const EntryFile* a, const EntryFile* b) { return a->mtime_ns < b->mtime_ns; });
  std::uint64_t removed = 0;
  for (const auto* item : items) {
    if (total <= max_bytes) break;
    if (::unlinkat(listing.dir_fd(item->dir), item->name.c_str(), 0) == 0) {
      total -= item->size;
      ++removed;
    }
  }
  return removed;
}

}  // namespace cudatool
