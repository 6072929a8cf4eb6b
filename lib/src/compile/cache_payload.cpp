#include "cudatool/compile/cache_payload.hpp"

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <span>

#include "base/json_read.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/sha256.hpp"
#include "cudatool/binary/cubin.hpp"

namespace cudatool::detail {
namespace {

struct FileState {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
};

// nullopt where nothing is there; `regular` false where something other than a regular
// file is (a directory: not what was recorded either way).
std::optional<FileState> stat_of(const std::string& path, bool* regular) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  *regular = S_ISREG(info.st_mode);
  const auto ns = [](const timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
  };
  return FileState{static_cast<std::uint64_t>(info.st_size), ns(info.st_mtim), ns(info.st_ctim)};
}

Dependency record(const std::filesystem::path& path, bool read) {
  Dependency d;
  d.path = path.string();
  d.read = read;
  bool regular = false;
  const auto state = stat_of(d.path, &regular);
  const auto text = state && regular ? detail::read_file(path) : std::nullopt;
  if (!text) {
    // Nothing readable there: recorded as absent, so that anything that appears is a miss
    // (a file that cannot be read now fails the compile, which is not cached).
    d.exists = false;
    return d;
  }
  d.size = state->size;
  d.mtime_ns = state->mtime_ns;
  d.ctime_ns = state->ctime_ns;
  d.sha256 = sha256_hex(*text);
  return d;
}

}  // namespace

std::vector<Dependency> record_dependencies(const std::vector<std::filesystem::path>& read,
                                            const std::vector<std::filesystem::path>& checked) {
  std::vector<Dependency> deps;
  for (const auto& path : read) deps.push_back(record(path, true));
  for (const auto& path : checked) deps.push_back(record(path, false));
  return deps;
}

bool dependencies_hold(const std::vector<Dependency>& deps) {
  for (const auto& d : deps) {
    bool regular = false;
    const auto now = stat_of(d.path, &regular);
    if (!d.exists) {
      if (now) return false;
      continue;
    }
    if (!now || !regular || now->size != d.size) return false;
    if (now->mtime_ns == d.mtime_ns && now->ctime_ns == d.ctime_ns) continue;
    const auto text = detail::read_file(d.path);
    if (!text || sha256_hex(*text) != d.sha256) return false;
  }
  return true;
}

std::string encode_cache_payload(const CachedCompile& c) {
  const CompileResult& r = c.result;
  nlohmann::json deps = nlohmann::json::array();
  for (const auto& d : c.dependencies) {
    if (!d.exists) {
      deps.push_back({{"path", d.path}, {"read", d.read}, {"exists", false}});
      continue;
    }
    deps.push_back({{"path", d.path},
                    {"read", d.read},
                    {"exists", true},
                    {"size", d.size},
                    {"mtime_ns", d.mtime_ns},
                    {"ctime_ns", d.ctime_ns},
                    {"sha256", d.sha256}});
  }
  nlohmann::json meta = {{"compiler", r.compiler},
                         {"compiler_version", r.compiler_version},
                         {"engine_reason", r.engine_reason},
                         {"log", r.log},
                         {"options", r.options},
                         {"arch", r.arch.str()},
                         {"output", to_string(r.output)},
                         {"dependencies", deps}};
  const std::string text = meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return std::to_string(text.size()) + "\n" + text + r.image;
}

std::optional<CompileResult> decode_cache_payload(std::string_view payload,
                                                  std::vector<Dependency>* dependencies) {
  const std::size_t newline = payload.find('\n');
  if (newline == std::string_view::npos || newline == 0 || newline > 12) return std::nullopt;
  std::uint64_t length = 0;
  for (std::size_t i = 0; i < newline; ++i) {
    const char c = payload[i];
    if (c < '0' || c > '9') return std::nullopt;
    length = length * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (payload.size() - newline - 1 < length) return std::nullopt;
  try {
    const auto meta = nlohmann::json::parse(payload.substr(newline + 1, length));
    CompileResult r;
    r.compiler = meta.at("compiler").get<std::string>();
    if (r.compiler != "nvrtc" && r.compiler != "nvcc") return std::nullopt;
    r.compiler_version = meta.at("compiler_version").get<std::string>();
    r.engine_reason = meta.at("engine_reason").get<std::string>();
    r.log = meta.at("log").get<std::string>();
    r.options = meta.at("options").get<std::vector<std::string>>();
    const auto arch = Arch::try_parse(meta.at("arch").get<std::string>());
    if (!arch) return std::nullopt;
    r.arch = *arch;
    const std::string output = meta.at("output").get<std::string>();
    if (output != "ptx" && output != "cubin") return std::nullopt;
    r.output = output == "ptx" ? OutputKind::ptx : OutputKind::cubin;
    if (dependencies) {
      for (const auto& j : meta.at("dependencies")) {
        Dependency d;
        d.path = j.at("path").get<std::string>();
        d.read = j.at("read").get<bool>();
        d.exists = j.at("exists").get<bool>();
        if (d.exists) {
          d.size = detail::json_integer<std::uint64_t>(j.at("size"));
          d.mtime_ns = detail::json_integer<std::int64_t>(j.at("mtime_ns"));
          d.ctime_ns = detail::json_integer<std::int64_t>(j.at("ctime_ns"));
          d.sha256 = j.at("sha256").get<std::string>();
        }
        dependencies->push_back(std::move(d));
      }
    }
    r.image = std::string(payload.substr(newline + 1 + length));
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<CachedCompile> decode_cache_payload(std::string_view payload) {
  std::vector<Dependency> dependencies;
  auto result = decode_cache_payload(payload, &dependencies);
  if (!result) return std::nullopt;
  CachedCompile c{std::move(*result), std::move(dependencies)};
  for (const auto& d : c.dependencies)
    if (d.read) c.result.includes.push_back(d.path);
  return c;
}

bool valid_image(const CompileResult& r) {
  if (r.image.empty()) return false;
  if (r.output == OutputKind::ptx) return r.image.find(".version") != std::string::npos;
  try {
    read_cubin(std::span(reinterpret_cast<const std::uint8_t*>(r.image.data()), r.image.size()));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace cudatool::detail
