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

bool stat_of(const std::string& path, std::uint64_t* size, std::int64_t* mtime_ns) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  *size = static_cast<std::uint64_t>(info.st_size);
  *mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  return true;
}

}  // namespace

std::vector<Dependency> record_dependencies(const std::vector<std::filesystem::path>& paths) {
  std::vector<Dependency> deps;
  for (const auto& path : paths) {
    Dependency d;
    d.path = path.string();
    if (!stat_of(d.path, &d.size, &d.mtime_ns)) continue;
    const auto text = detail::read_file(path);
    if (!text) continue;
    d.sha256 = sha256_hex(*text);
    deps.push_back(std::move(d));
  }
  return deps;
}

bool dependencies_hold(const std::vector<Dependency>& deps) {
  for (const auto& d : deps) {
    std::uint64_t size = 0;
    std::int64_t mtime = 0;
    if (!stat_of(d.path, &size, &mtime) || size != d.size) return false;
    if (mtime == d.mtime_ns) continue;
    const auto text = detail::read_file(d.path);
    if (!text || sha256_hex(*text) != d.sha256) return false;
  }
  return true;
}

std::string encode_cache_payload(const CachedCompile& c) {
  const CompileResult& r = c.result;
  nlohmann::json deps = nlohmann::json::array();
  for (const auto& d : c.dependencies)
    deps.push_back(
        {{"path", d.path}, {"size", d.size}, {"mtime_ns", d.mtime_ns}, {"sha256", d.sha256}});
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
                                                  std::vector<std::string>* dependency_paths) {
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
    if (dependency_paths) {
      for (const auto& d : meta.at("dependencies")) {
        dependency_paths->push_back(d.at("path").get<std::string>());
        dependency_paths->push_back(
            std::to_string(detail::json_integer<std::uint64_t>(d.at("size"))));
        dependency_paths->push_back(
            std::to_string(detail::json_integer<std::int64_t>(d.at("mtime_ns"))));
        dependency_paths->push_back(d.at("sha256").get<std::string>());
      }
    }
    r.image = std::string(payload.substr(newline + 1 + length));
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<CachedCompile> decode_cache_payload(std::string_view payload) {
  std::vector<std::string> fields;
  auto result = decode_cache_payload(payload, &fields);
  if (!result) return std::nullopt;
  CachedCompile c{std::move(*result), {}};
  for (std::size_t i = 0; i + 3 < fields.size(); i += 4) {
    Dependency d;
    d.path = fields[i];
    d.size = std::stoull(fields[i + 1]);
    d.mtime_ns = std::stoll(fields[i + 2]);
    d.sha256 = fields[i + 3];
    c.dependencies.push_back(std::move(d));
  }
  for (const auto& d : c.dependencies) c.result.includes.push_back(d.path);
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
