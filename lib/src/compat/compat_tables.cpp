// The compiled-in tables of share/gpus.json and share/cuda-releases.json, parsed once. A
// malformed table is the build's fault, caught by test_compat_tables.cpp.
#include <algorithm>
#include <cctype>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "compat_tables.inc"
#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/compat/compat.hpp"

namespace cudatool {
namespace {

// "9.0" -> {9, 0}: the tables' spelling of a compute capability and a PTX ISA version.
std::pair<int, int> dotted(const std::string& text) {
  const auto dot = text.find('.');
  if (dot == std::string::npos) throw LogicError("compiled-in table: bad version " + text);
  return {std::stoi(text.substr(0, dot)), std::stoi(text.substr(dot + 1))};
}

// "580.65.06" -> {580, 65, 6}; nullopt for anything but dot-separated numbers.
std::optional<std::vector<long>> driver_numbers(std::string_view text) {
  std::vector<long> parts;
  long value = -1;
  for (char c : text) {
    if (c == '.') {
      if (value < 0) return std::nullopt;
      parts.push_back(value);
      value = -1;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      value = (value < 0 ? 0 : value * 10) + (c - '0');
      if (value > 1000000) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (value < 0 || parts.size() > 3) return std::nullopt;
  parts.push_back(value);
  return parts;
}

// Lower case without spaces, hyphens and underscores, a leading "nvidia", "geforce" or
// "tesla" dropped: "NVIDIA GeForce RTX 4090" -> "rtx4090".
std::string product_key(std::string_view name) {
  std::string key;
  for (char c : name)
    if (c != ' ' && c != '-' && c != '_')
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string_view prefix : {"nvidia", "geforce", "tesla"})
    if (key.starts_with(prefix)) key.erase(0, prefix.size());
  return key;
}

struct Tables {
  std::vector<CudaRelease> releases;
  std::vector<GpuProduct> gpus;
};

const Tables& tables() {
  static const Tables t = [] {
    Tables t;
    const auto releases = nlohmann::json::parse(k_cuda_releases_json);
    for (const auto& r : releases.at("releases")) {
      CudaRelease c;
      std::tie(c.major, c.minor) = dotted(r.at("cuda").get<std::string>());
      c.driver = r.at("driver").get<std::string>();
      std::tie(c.ptx.major, c.ptx.minor) = dotted(r.at("ptx_isa").get<std::string>());
      t.releases.push_back(std::move(c));
    }
    const auto gpus = nlohmann::json::parse(k_gpus_json);
    for (const auto& g : gpus.at("gpus")) {
      GpuProduct p;
      p.name = g.at("name").get<std::string>();
      std::tie(p.cc.major, p.cc.minor) = dotted(g.at("cc").get<std::string>());
      if (g.contains("aliases")) p.aliases = g.at("aliases").get<std::vector<std::string>>();
      t.gpus.push_back(std::move(p));
    }
    return t;
  }();
  return t;
}

}  // namespace

const std::vector<CudaRelease>& cuda_releases() {
  return tables().releases;
}

const CudaRelease* cuda_release_for_driver(std::string_view driver_version) {
  const auto version = driver_numbers(driver_version);
  if (!version) return nullptr;
  const CudaRelease* found = nullptr;
  for (const CudaRelease& r : cuda_releases())
    if (*driver_numbers(r.driver) <= *version) found = &r;
  return found;
}

const CudaRelease* cuda_release_named(std::string_view version) {
  const auto numbers = driver_numbers(version);
  if (!numbers || numbers->size() != 2) return nullptr;
  const CudaRelease* found = nullptr;
  for (const CudaRelease& r : cuda_releases())
    if (std::pair<long, long>(r.major, r.minor) <= std::pair((*numbers)[0], (*numbers)[1]))
      found = &r;
  return found;
}

const CudaRelease* first_release_for_ptx(PtxVersion ptx) {
  for (const CudaRelease& r : cuda_releases())
    if (r.ptx >= ptx) return &r;
  return nullptr;
}

const std::vector<GpuProduct>& gpu_products() {
  return tables().gpus;
}

const GpuProduct* find_gpu_product(std::string_view name) {
  const std::string key = product_key(name);
  if (key.empty()) return nullptr;
  for (const GpuProduct& p : gpu_products()) {
    if (product_key(p.name) == key) return &p;
    for (const std::string& alias : p.aliases)
      if (product_key(alias) == key) return &p;
  }
  return nullptr;
}

}  // namespace cudatool
