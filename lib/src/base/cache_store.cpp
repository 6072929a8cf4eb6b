#include "base/cache_store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cudatool/base/file_io.hpp"
#include "cudatool/base/sha256.hpp"

namespace cudatool {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic = "cudatool-cache ";
constexpr std::string_view kVersion = "2";
// Removing a directory in an entry's place goes this deep at most (a planted tree).
constexpr int kMaxRemoveDepth = 16;

bool is_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

void remove_at(int at, const char* name, int depth) {
  struct stat info {};
  if (::fstatat(at, name, &info, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (!S_ISDIR(info.st_mode)) {
    ::unlinkat(at, name, 0);
    return;
  }
  if (depth < kMaxRemoveDepth)
    if (UniqueFd dir = open_directory_at(at, name))
      for (const auto& n : list_directory(dir.get())) remove_at(dir.get(), n.c_str(), depth + 1);
  ::unlinkat(at, name, AT_REMOVEDIR);
}

}  // namespace

// ---- where -----------------------------------------------------------------------------------

CacheHome cache_home() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return {"XDG_CACHE_HOME", xdg, xdg};
  if (const char* home = std::getenv("HOME"); home && *home)
    return {"HOME", home, fs::path(home) / ".cache"};
  return {};
}

std::error_code make_private_directories(const fs::path& path) {
  std::error_code ec;
  if (path.empty() || fs::is_directory(path, ec)) return {};
  if (path.has_parent_path() && path.parent_path() != path)
    if (auto parent = make_private_directories(path.parent_path())) return parent;
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return std::error_code(errno, std::generic_category());
  return {};
}

// ---- trust -----------------------------------------------------------------------------------

std::string CacheDistrust::message() const {
  if (reason == Reason::owner)
    return "owned by uid " + std::to_string(owner) + ", not by you (uid " +
           std::to_string(::geteuid()) + ")";
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode));
  std::string message = "writable by others (mode ";
  message += text;
  message += ')';
  return message;
}

std::optional<CacheDistrust> untrusted(const struct stat& info, const CacheTrust& rule, bool top) {
  const mode_t mode = info.st_mode & 07777;
  if (info.st_uid != ::geteuid() && !(rule.root_may_own && info.st_uid == 0))
    return CacheDistrust{CacheDistrust::Reason::owner, info.st_uid, mode};
  const bool sticky_top =
      top && rule.sticky_top_may_be_open && S_ISDIR(info.st_mode) && (info.st_mode & S_ISVTX) != 0;
  if ((info.st_mode & rule.forbidden_mode) != 0 && !sticky_top)
    return CacheDistrust{CacheDistrust::Reason::mode, info.st_uid, mode};
  return std::nullopt;
}

std::optional<std::string> untrusted_message(int fd, const CacheTrust& rule, bool top) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return std::string(std::strerror(errno));
  if (const auto why = untrusted(info, rule, top)) return why->message();
  return std::nullopt;
}

// ---- directories -----------------------------------------------------------------------------

UniqueFd open_cache_directory(const fs::path& path) {
  return UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

UniqueFd open_directory_at(int at, const char* name) {
  return UniqueFd(::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

UniqueFd make_directory_at(int at, const char* name) {
  if (::mkdirat(at, name, 0700) != 0 && errno != EEXIST) return UniqueFd();
  UniqueFd dir = open_directory_at(at, name);
  if (dir) return dir;
  if (errno != ELOOP && errno != ENOTDIR) return UniqueFd();
  remove_at(at, name);
  if (::mkdirat(at, name, 0700) != 0) return UniqueFd();
  return open_directory_at(at, name);
}

void remove_at(int at, const char* name) {
  remove_at(at, name, 0);
}

std::vector<std::string> list_directory(int fd) {
  std::vector<std::string> names;
  // A stream of its own (closedir closes it), from the start whoever read `fd` before.
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

// ---- entry files -----------------------------------------------------------------------------

CacheFile open_cache_file_at(int dir, const std::string& name) {
  CacheFile file;
  file.fd = UniqueFd(
      ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!file.fd) {
    file.error = errno;
  } else if (::fstat(file.fd.get(), &file.info) != 0) {
    file.error = errno;
    file.fd = UniqueFd();
  }
  return file;
}

std::optional<std::string> read_cache_file(const CacheFile& file, std::uint64_t max_bytes) {
  if (!file.fd || !S_ISREG(file.info.st_mode) || file.info.st_size < 0 ||
      static_cast<std::uint64_t>(file.info.st_size) > max_bytes)
    return std::nullopt;
  std::string data(static_cast<std::size_t>(file.info.st_size), '\0');
  const ReadOutcome got = read_full(file.fd.get(), data);
  if (got.error != 0 || got.bytes != data.size()) return std::nullopt;
  return data;
}

detail::AtomicWriteOutcome write_cache_file_at(int dir, const std::string& name,
                                               std::string_view data) {
  // rename(2) replaces a file or a link, not a directory: one planted there goes first.
  if (struct stat info{};
      ::fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(info.st_mode))
    remove_at(dir, name.c_str());
  return detail::write_atomically_at(dir, name, data, 0600, 0600);
}

bool is_temporary_for(std::string_view name, std::string_view target) {
  // ".<target>.<pid>.<n>.tmp" (file_io.cpp's temporary_for).
  if (!name.starts_with('.') || !name.ends_with(".tmp")) return false;
  name.remove_prefix(1);
  name.remove_suffix(4);
  if (!name.starts_with(target) || name.size() < target.size() + 4) return false;
  name.remove_prefix(target.size());
  if (name[0] != '.') return false;
  name.remove_prefix(1);
  const auto dot = name.find('.');
  const auto digits = [](std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dot != std::string_view::npos && digits(name.substr(0, dot)) &&
         digits(name.substr(dot + 1));
}

// ---- the entry format ------------------------------------------------------------------------

bool valid_cache_key(std::string_view key) {
  return !key.empty() && key.size() <= 64 && is_hex(key);
}

std::string encode_cache_entry(std::string_view key, std::string_view payload) {
  std::string data(kMagic);
  data += kVersion;
  data += "\nkey ";
  data += key;
  data += "\nsize ";
  data += std::to_string(payload.size());
  data += "\nsha256 ";
  data += sha256_hex(payload);
  data += '\n';
  data.append(payload);
  return data;
}

DecodedCacheEntry decode_cache_entry_unverified(std::string_view bytes,
                                                std::string_view expected_key) {
  DecodedCacheEntry entry;
  if (!bytes.starts_with(kMagic)) return entry;  // header
  std::size_t pos = kMagic.size();
  // One "<label><value>\n" line at `pos`, its value at most 64 bytes.
  auto line = [&](std::string_view label) -> std::optional<std::string_view> {
    if (bytes.substr(pos, label.size()) != label) return std::nullopt;
    const std::size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos || end > pos + label.size() + 64) return std::nullopt;
    const std::string_view value = bytes.substr(pos + label.size(), end - pos - label.size());
    pos = end + 1;
    return value;
  };
  if (line("") != kVersion) {
    entry.damage = CacheEntryDamage::format;
    return entry;
  }
  entry.damage = CacheEntryDamage::fields;
  const auto key = line("key ");
  const auto size = line("size ");
  const auto digest = line("sha256 ");
  if (!key || !size || !digest || !valid_cache_key(*key) || digest->size() != 64 ||
      !is_hex(*digest) || size->empty() || size->size() > 19 ||
      (size->size() > 1 && (*size)[0] == '0'))
    return entry;
  std::uint64_t length = 0;
  for (const char c : *size) {
    if (c < '0' || c > '9') return entry;
    length = length * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (*key != expected_key) {
    entry.damage = CacheEntryDamage::key;
    return entry;
  }
  if (bytes.size() - pos != length) {
    entry.damage = CacheEntryDamage::size;
    return entry;
  }
  entry.damage = CacheEntryDamage::none;
  entry.payload = bytes.substr(pos);
  entry.digest = *digest;
  return entry;
}

bool verify_cache_entry(DecodedCacheEntry& entry) {
  if (entry.ok() && sha256_hex(entry.payload) != entry.digest) {
    entry.damage = CacheEntryDamage::checksum;
    entry.payload = {};
  }
  return entry.ok();
}

DecodedCacheEntry decode_cache_entry(std::string_view bytes, std::string_view expected_key) {
  DecodedCacheEntry entry = decode_cache_entry_unverified(bytes, expected_key);
  verify_cache_entry(entry);
  return entry;
}

std::string_view claimed_cache_key(std::string_view bytes) {
  const auto at = bytes.find("\nkey ");
  if (at == std::string_view::npos) return {};
  const std::string_view rest = bytes.substr(at + 5);
  return rest.substr(0, std::min<std::size_t>(rest.find('\n'), 64));
}

}  // namespace cudatool
