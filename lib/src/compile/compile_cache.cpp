#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/units.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cudatool/base/error.hpp"
#include "cudatool/base/sha256.hpp"

namespace cudatool {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic = "cudatool-cache 1\n";
constexpr std::string_view kExtension = ".entry";

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

bool is_entry(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_regular_file(ec) && e.path().extension() == kExtension;
}

bool is_temporary(const fs::directory_entry& e) {
  return e.path().filename().string().find(".tmp.") != std::string::npos;
}

}  // namespace

CacheConfig CacheConfig::from_environment(const std::optional<std::string>& dir_flag,
                                          bool no_cache) {
  CacheConfig config;
  if (dir_flag && !dir_flag->empty()) {
    config.dir = *dir_flag;
  } else if (!env("CUDATOOL_CACHE_DIR").empty()) {
    config.dir = env("CUDATOOL_CACHE_DIR");
  } else if (!env("XDG_CACHE_HOME").empty()) {
    config.dir = fs::path(env("XDG_CACHE_HOME")) / "cudatool";
  } else if (!env("HOME").empty()) {
    config.dir = fs::path(env("HOME")) / ".cache" / "cudatool";
  } else {
    config.enabled = false;
    config.disabled_by = "no HOME";
  }
  if (no_cache) {
    config.enabled = false;
    config.disabled_by = "--no-cache";
  } else if (truthy(std::getenv("CUDATOOL_DISABLE_CACHE"))) {
    config.enabled = false;
    config.disabled_by = "CUDATOOL_DISABLE_CACHE";
  }
  if (const std::string size = env("CUDATOOL_CACHE_MAX_SIZE"); !size.empty())
    config.max_bytes = parse_size(size, "CUDATOOL_CACHE_MAX_SIZE");
  return config;
}

void to_json(nlohmann::json& j, const CacheStats& s) {
  j = nlohmann::json{
      {"dir", s.dir}, {"entries", s.entries}, {"bytes", s.bytes}, {"max_bytes", s.max_bytes}};
}

CompileCache::CompileCache(CacheConfig config) : config_(std::move(config)) {}

fs::path CompileCache::entry_path(const std::string& key) const {
  return config_.dir / "v1" / key.substr(0, 2) / (key + std::string(kExtension));
}

void CompileCache::disable(const std::string& why) {
  if (broken_) return;
  broken_ = true;
  warnings_.push_back("compile cache disabled: " + why + "; compiling without the cache");
}

std::optional<std::string> CompileCache::load(const std::string& key) {
  if (!enabled()) return std::nullopt;
  const fs::path path = entry_path(key);
  auto data = detail::read_file(path);
  if (!data) return std::nullopt;
  // Header: magic, "size N\n", "sha256 HEX\n", then the payload.
  auto damaged = [&]() -> std::optional<std::string> {
    ::unlink(path.c_str());
    return std::nullopt;
  };
  if (data->compare(0, kMagic.size(), kMagic) != 0) return damaged();
  std::size_t pos = kMagic.size();
  auto line = [&](std::string_view label) -> std::optional<std::string> {
    const std::size_t end = data->find('\n', pos);
    if (end == std::string::npos || data->compare(pos, label.size(), label) != 0)
      return std::nullopt;
    std::string value = data->substr(pos + label.size(), end - pos - label.size());
    pos = end + 1;
    return value;
  };
  const auto size = line("size ");
  const auto digest = line("sha256 ");
  if (!size || !digest || size->empty() ||
      !std::all_of(size->begin(), size->end(), [](unsigned char c) { return std::isdigit(c); }))
    return damaged();
  if (data->size() - pos != std::stoull(*size)) return damaged();
  std::string payload = data->substr(pos);
  if (sha256_hex(payload) != *digest) return damaged();
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used
  return payload;
}

bool CompileCache::store(const std::string& key, std::string_view payload) {
  if (!enabled()) return false;
  const fs::path path = entry_path(key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    disable("cannot create " + path.parent_path().string() + " (" + ec.message() + ")");
    return false;
  }
  static std::atomic<unsigned> counter{0};
  const fs::path temporary = path.string() + ".tmp." + std::to_string(::getpid()) + "." +
                             std::to_string(counter.fetch_add(1));
  std::string data(kMagic);
  data += "size " + std::to_string(payload.size()) + "\n";
  data += "sha256 " + sha256_hex(payload) + "\n";
  data.append(payload);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    disable("cannot write in " + path.parent_path().string() + " (" + std::strerror(errno) + ")");
    return false;
  }
  std::size_t written = 0;
  bool ok = true;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  const int saved = errno;
  if (::close(fd) != 0) ok = false;
  if (!ok || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = ok ? std::strerror(errno) : std::strerror(saved);
    ::unlink(temporary.c_str());
    disable("cannot write " + path.string() + " (" + why + ")");
    return false;
  }
  if (stats().bytes > config_.max_bytes) trim(config_.max_bytes);
  return true;
}

CacheStats CompileCache::stats() const {
  CacheStats s;
  s.dir = config_.dir.string();
  s.max_bytes = config_.max_bytes;
  std::error_code ec;
  const fs::path root = config_.dir / "v1";
  if (!fs::is_directory(root, ec)) return s;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_entry(*it) || is_temporary(*it)) continue;
    ++s.entries;
    s.bytes += it->file_size(ec);
  }
  return s;
}

std::uint64_t CompileCache::clear() {
  std::uint64_t removed = 0;
  std::error_code ec;
  const fs::path root = config_.dir / "v1";
  if (!fs::is_directory(root, ec)) return 0;
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (it->is_regular_file(file_ec)) files.push_back(it->path());
  }
  for (const auto& file : files) {
    const bool entry = file.extension() == kExtension;
    if (::unlink(file.c_str()) == 0 && entry) ++removed;
  }
  return removed;
}

std::uint64_t CompileCache::trim(std::uint64_t max_bytes) {
  struct Item {
    fs::path path;
    std::uint64_t size;
    fs::file_time_type time;
  };
  std::vector<Item> items;
  std::uint64_t total = 0;
  std::error_code ec;
  const fs::path root = config_.dir / "v1";
  if (!fs::is_directory(root, ec)) return 0;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_entry(*it) || is_temporary(*it)) continue;
    std::error_code item_ec;
    Item item{it->path(), it->file_size(item_ec), it->last_write_time(item_ec)};
    if (item_ec) continue;
    total += item.size;
    items.push_back(std::move(item));
  }
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.time < b.time; });
  std::uint64_t removed = 0;
  for (const auto& item : items) {
    if (total <= max_bytes) break;
    if (::unlink(item.path.c_str()) == 0) {
      total -= item.size;
      ++removed;
    }
  }
  return removed;
}

}  // namespace cudatool
