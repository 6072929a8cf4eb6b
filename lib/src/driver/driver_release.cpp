#include "cudatool/driver/driver_release.hpp"

#include <cctype>
#include <sstream>

#include "cudatool/base/file_io.hpp"
#include "cudatool/base/test_hooks.hpp"
#include "driver/nvml_queries.hpp"

namespace cudatool {
namespace {

// "580.159.04", "535.104.05", "575.51": digits and at least one dot, nothing else.
bool is_version(std::string_view word) {
  if (word.empty() || !std::isdigit(static_cast<unsigned char>(word.front())) ||
      !std::isdigit(static_cast<unsigned char>(word.back())))
    return false;
  bool dot = false;
  for (const char c : word) {
    if (c == '.')
      dot = true;
    else if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  }
  return dot && word.find("..") == std::string_view::npos;
}

}  // namespace

std::optional<std::string> parse_proc_driver_version(std::string_view text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue Jul 29 ...", or
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build ...".
  constexpr std::string_view kPrefix = "NVRM version:";
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.substr(0, kPrefix.size()) != kPrefix) continue;
    std::istringstream words{std::string(line.substr(kPrefix.size()))};
    for (std::string word; words >> word;)
      if (is_version(word)) return word;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::string> read_proc_driver_version(const std::filesystem::path& path) {
  // The one input reader (base/file_io): a regular file only, opened without blocking (a
  // FIFO there blocked `devices` forever); the file is a few lines, anything longer is not it.
  const auto text = detail::read_file(path, kMaxConfigFileBytes);
  if (!text) return std::nullopt;
  return parse_proc_driver_version(*text);
}

std::filesystem::path proc_driver_version_path() {
  if (const char* path = test_hook("CUDATOOL_TEST_PROC_DRIVER_VERSION")) return path;
  return "/proc/driver/nvidia/version";
}

std::optional<std::string> driver_release(bool prefer_nvml) {
  if (prefer_nvml) {
    if (auto version = nvml_driver_version()) return version;
    return read_proc_driver_version(proc_driver_version_path());
  }
  if (auto version = read_proc_driver_version(proc_driver_version_path())) return version;
  return nvml_driver_version();
}

}  // namespace cudatool
