#include "cudatool/compile/compile_cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <system_error>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/sha256.hpp"
#include "cudatool/base/units.hpp"

namespace cudatool {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic = "cudatool-cache 2\n";
constexpr std::string_view kExtension = ".entry";
constexpr const char* kVersionDir = "v2";
constexpr std::uint64_t kMaxEntryBytes = 1ull << 30;
// A store writes its temporary in well under a second; one older than this was left by a
// process that died, and --cache-clear removes it.
constexpr std::int64_t kAbandonedTemporaryNs = std::int64_t{3600} * 1000000000;

// `path` and its missing parents, each created 0700 (the cache holds what the user's
// sources compile to); what exists already is left as it is.
std::error_code make_private_directories(const fs::path& path) {
  std::error_code ec;
  if (path.empty() || fs::is_directory(path, ec)) return {};
  if (path.has_parent_path() && path.parent_path() != path)
    if (auto parent = make_private_directories(path.parent_path())) return parent;
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return std::error_code(errno, std::generic_category());
  return {};
}

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

bool is_hex(std::string_view s, std::size_t length) {
  return s.size() == length && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool valid_key(std::string_view key) {
  return is_hex(key, 64);
}

// "<key>.entry" in directory "<first two digits>".
bool entry_name(std::string_view dir, std::string_view name) {
  return name.size() == 64 + kExtension.size() && name.substr(64) == kExtension &&
         valid_key(name.substr(0, 64)) && name.substr(0, 2) == dir;
}

bool temporary_name(std::string_view dir, std::string_view name) {
  const std::string_view tag = ".entry.tmp.";
  return name.size() > 64 + tag.size() && name.substr(64, tag.size()) == tag &&
         valid_key(name.substr(0, 64)) && name.substr(0, 2) == dir;
}

// A file descriptor, closed with the object.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
};

// A directory below `at`, never through a link.
Fd open_dir_at(int at, const char* name) {
  return Fd(::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// Why the file or directory `fd` is not to be trusted (as ssh treats its files): owned by
// someone else (root excepted), or writable by group or others. The cache's own top
// directory may be writable by others when it is sticky (a shared 1777 directory like
// /tmp): nobody can then rename or remove what another user put there.
std::optional<std::string> distrust(int fd, bool top) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return std::string(std::strerror(errno));
  if (info.st_uid != ::geteuid() && info.st_uid != 0)
    return "owned by uid " + std::to_string(info.st_uid) + ", not by you (uid " +
           std::to_string(::geteuid()) + ")";
  const bool sticky = (info.st_mode & S_ISVTX) != 0;
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0 && !(top && S_ISDIR(info.st_mode) && sticky)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return std::string("writable by others (mode ") + mode + ")";
  }
  return std::nullopt;
}

// Removes `name` below `at` whatever it is, without following links.
void remove_at(int at, const char* name, int depth = 0) {
  struct stat info {};
  if (::fstatat(at, name, &info, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (!S_ISDIR(info.st_mode)) {
    ::unlinkat(at, name, 0);
    return;
  }
  if (depth < 16) {
    if (Fd dir = open_dir_at(at, name)) {
      const int copy = ::dup(dir.get());
      if (DIR* stream = copy >= 0 ? ::fdopendir(copy) : nullptr) {
        std::vector<std::string> names;
        while (const dirent* e = ::readdir(stream))
          if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            names.emplace_back(e->d_name);
        ::closedir(stream);
        for (const auto& n : names) remove_at(dir.get(), n.c_str(), depth + 1);
      } else if (copy >= 0) {
        ::close(copy);
      }
    }
  }
  ::unlinkat(at, name, AT_REMOVEDIR);
}

// A directory below `at`, created when absent; a link or file in its place is replaced.
Fd make_dir_at(int at, const char* name) {
  if (::mkdirat(at, name, 0700) != 0 && errno != EEXIST) return Fd();
  Fd dir = open_dir_at(at, name);
  if (dir) return dir;
  if (errno != ELOOP && errno != ENOTDIR) return Fd();
  remove_at(at, name);
  if (::mkdirat(at, name, 0700) != 0) return Fd();
  return open_dir_at(at, name);
}

std::vector<std::string> list_dir(int fd) {
  std::vector<std::string> names;
  const int copy = ::dup(fd);
  if (copy < 0) return names;
  DIR* stream = ::fdopendir(copy);
  if (stream == nullptr) {
    ::close(copy);
    return names;
  }
  ::rewinddir(stream);
  while (const dirent* e = ::readdir(stream))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  ::closedir(stream);
  return names;
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
  std::vector<std::pair<std::string, Fd>> dirs;
  std::vector<EntryFile> files;
  int dir_fd(const std::string& name) const {
    for (const auto& [n, fd] : dirs)
      if (n == name) return fd.get();
    return -1;
  }
};

Listing list_entries(const fs::path& root) {
  Listing listing;
  Fd top(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top) return listing;
  Fd version = open_dir_at(top.get(), kVersionDir);
  if (!version || distrust(top.get(), true) || distrust(version.get(), false)) return listing;
  for (const auto& sub : list_dir(version.get())) {
    if (!is_hex(sub, 2)) continue;
    Fd dir = open_dir_at(version.get(), sub.c_str());
    if (!dir || distrust(dir.get(), false)) continue;
    for (const auto& name : list_dir(dir.get())) {
      const bool entry = entry_name(sub, name);
      const bool temporary = !entry && temporary_name(sub, name);
      if (!entry && !temporary) continue;
      struct stat info {};
      if (::fstatat(dir.get(), name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
          !S_ISREG(info.st_mode) || (info.st_uid != ::geteuid() && info.st_uid != 0) ||
          (info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
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
  std::string data(kMagic);
  data += "key ";
  data += key;
  data += "\nsize " + std::to_string(payload.size()) + "\n";
  data += "sha256 " + sha256_hex(payload) + "\n";
  data.append(payload);
  return data;
}

std::optional<std::string_view> parse_cache_entry(std::string_view bytes,
                                                  std::string_view expected_key) {
  if (bytes.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  std::size_t pos = kMagic.size();
  auto line = [&](std::string_view label) -> std::optional<std::string_view> {
    if (bytes.substr(pos, label.size()) != label) return std::nullopt;
    const std::size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos || end > pos + label.size() + 64) return std::nullopt;
    const std::string_view value = bytes.substr(pos + label.size(), end - pos - label.size());
    pos = end + 1;
    return value;
  };
  const auto key = line("key ");
  const auto size = line("size ");
  const auto digest = line("sha256 ");
  if (!key || !size || !digest || !valid_key(*key) || *key != expected_key ||
      !is_hex(*digest, 64) || size->empty() || size->size() > 19 ||
      (size->size() > 1 && (*size)[0] == '0'))
    return std::nullopt;
  std::uint64_t length = 0;
  for (const char c : *size) {
    if (c < '0' || c > '9') return std::nullopt;
    length = length * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (bytes.size() - pos != length) return std::nullopt;
  const std::string_view payload = bytes.substr(pos);
  if (sha256_hex(payload) != *digest) return std::nullopt;
  return payload;
}

CacheConfig CacheConfig::from_environment(const std::optional<std::string>& dir_flag, bool no_cache,
                                          std::string_view dir_flag_name) {
  CacheConfig config;
  auto under = [&](const std::string& variable, const fs::path& base, const fs::path& rest) {
    config.dir = base / rest;
    if (!exists_as_directory(base)) {
      config.enabled = false;
      config.disabled_by = variable;
      config.note = "compile cache off: " + variable + "=" + base.string() +
                    " is not a directory (cudatool does not create it); set CUDATOOL_CACHE_DIR" +
                    (dir_flag_name.empty() ? "" : " or " + std::string(dir_flag_name)) +
                    " to use one";
    }
  };
  if (dir_flag && !dir_flag->empty()) {
    config.dir = *dir_flag;
  } else if (!env("CUDATOOL_CACHE_DIR").empty()) {
    config.dir = env("CUDATOOL_CACHE_DIR");
  } else if (!env("XDG_CACHE_HOME").empty() && fs::path(env("XDG_CACHE_HOME")).is_absolute()) {
    // A relative XDG_CACHE_HOME is invalid and ignored (XDG Base Directory spec).
    under("XDG_CACHE_HOME", env("XDG_CACHE_HOME"), "cudatool");
  } else if (!env("HOME").empty()) {
    under("HOME", env("HOME"), fs::path(".cache") / "cudatool");
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
  const auto why = distrust(fd, top);
  if (why) disable(path.string() + " is " + *why + ", so its entries cannot be trusted");
  return !why;
}

std::optional<std::string> CompileCache::load(const std::string& key) {
  if (!enabled() || !valid_key(key)) return std::nullopt;
  Fd top(::open(config_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top || !trusted(top.get(), config_.dir, true)) return std::nullopt;
  Fd version = open_dir_at(top.get(), kVersionDir);
  if (!version || !trusted(version.get(), config_.dir / kVersionDir, false)) return std::nullopt;
  const std::string sub = key.substr(0, 2);
  Fd dir = open_dir_at(version.get(), sub.c_str());
  if (!dir || !trusted(dir.get(), config_.dir / kVersionDir / sub, false)) return std::nullopt;
  const std::string name = key + std::string(kExtension);
  Fd file(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!file) {
    if (errno != ENOENT) remove_at(dir.get(), name.c_str());  // a link, or unreadable
    return std::nullopt;
  }
  // An entry someone else could have written: a miss (the store replaces it), said once.
  if (const auto why = distrust(file.get(), false)) {
    if (!distrust_warned_) {
      distrust_warned_ = true;
      warnings_.push_back("compile cache: ignored " + entry_path(key).string() + ": " + *why);
    }
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(file.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<std::uint64_t>(info.st_size) > kMaxEntryBytes) {
    file = Fd();
    remove_at(dir.get(), name.c_str());
    return std::nullopt;
  }
  std::string data(static_cast<std::size_t>(info.st_size), '\0');
  const ReadOutcome got = read_full(file.get(), data);
  const bool whole = got.error == 0 && got.bytes == data.size();
  const auto payload = whole ? parse_cache_entry(data, key) : std::nullopt;
  if (!payload) {
    file = Fd();
    ::unlinkat(dir.get(), name.c_str(), 0);
    return std::nullopt;
  }
  ::futimens(file.get(), nullptr);  // recently used
  return std::string(*payload);
}

void CompileCache::remove(const std::string& key) {
  if (!valid_key(key)) return;
  Fd top(::open(config_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top) return;
  Fd version = open_dir_at(top.get(), kVersionDir);
  if (!version) return;
  Fd dir = open_dir_at(version.get(), key.substr(0, 2).c_str());
  if (!dir) return;
  remove_at(dir.get(), (key + std::string(kExtension)).c_str());
}

bool CompileCache::store(const std::string& key, std::string_view payload) {
  if (!enabled() || !valid_key(key)) return false;
  const std::error_code ec = make_private_directories(config_.dir);
  Fd top(::open(config_.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!top) {
    disable("cannot use " + config_.dir.string() + " (" +
            (ec ? ec.message() : std::string(std::strerror(errno))) + ")");
    return false;
  }
  if (!trusted(top.get(), config_.dir, true)) return false;
  Fd version = make_dir_at(top.get(), kVersionDir);
  if (version && !trusted(version.get(), config_.dir / kVersionDir, false)) return false;
  const std::string sub = key.substr(0, 2);
  Fd dir = version ? make_dir_at(version.get(), sub.c_str()) : Fd();
  if (!dir) {
    disable("cannot create " + (config_.dir / kVersionDir / sub).string() + " (" +
            std::strerror(errno) + ")");
    return false;
  }
  if (!trusted(dir.get(), config_.dir / kVersionDir / sub, false)) return false;
  static std::atomic<unsigned> counter{0};
  const std::string name = key + std::string(kExtension);
  const std::string temporary =
      name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
  const std::string data = format_cache_entry(key, payload);
  Fd fd(::openat(dir.get(), temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0600));
  if (!fd) {
    disable("cannot write in " + (config_.dir / kVersionDir / sub).string() + " (" +
            std::strerror(errno) + ")");
    return false;
  }
  int error = write_all(fd.get(), data);
  if (::close(fd.release()) != 0 && error == 0) error = errno;
  if (error == 0 && ::renameat(dir.get(), temporary.c_str(), dir.get(), name.c_str()) != 0) {
    // A directory where the entry goes: remove it and try once more.
    remove_at(dir.get(), name.c_str());
    if (::renameat(dir.get(), temporary.c_str(), dir.get(), name.c_str()) != 0) error = errno;
  }
  if (error == ENOENT) return false;  // the temporary went (a clear long after it began)
  if (error != 0) {
    ::unlinkat(dir.get(), temporary.c_str(), 0);
    disable("cannot write " + entry_path(key).string() + " (" + std::strerror(error) + ")");
    return false;
  }
  if (stats().bytes > config_.max_bytes) trim(config_.max_bytes);
  return true;
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
