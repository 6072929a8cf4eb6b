#include "device/machine_fingerprint.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "cudatool/base/file_io.hpp"
#include "cudatool/base/test_hooks.hpp"

namespace cudatool::detail {
namespace {

// System files are a few KiB (/proc/modules the largest); anything larger is not them.
constexpr std::size_t kMaxSystemFileBytes = 256 * 1024;

std::optional<std::string> read_system_file(const std::string& path) {
  return detail::read_file(path, kMaxSystemFileBytes);
}

// A file's identity: what changes when it is replaced, rewritten or retargeted.
std::string identity(const struct stat& s) {
  return std::to_string(s.st_dev) + ":" + std::to_string(s.st_ino) + ":" +
         std::to_string(s.st_mode) + ":" + std::to_string(s.st_size) + ":" +
         std::to_string(s.st_mtim.tv_sec) + "." + std::to_string(s.st_mtim.tv_nsec) + ":" +
         std::to_string(s.st_ctim.tv_sec) + "." + std::to_string(s.st_ctim.tv_nsec);
}

std::string identity_of(const std::string& path) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) return "absent";
  return identity(s);
}

// The loader's inputs and the identity of the driver file it gave last time.
std::string library_lines(const std::string& libcuda_path) {
  std::string text = "libcuda " + one_line(libcuda_path) + " " + identity_of(libcuda_path) + "\n";
  text += "ld.so.cache " + identity_of("/etc/ld.so.cache") + "\n";
  if (const char* paths = std::getenv("LD_LIBRARY_PATH")) {
    std::string_view rest(paths);
    while (true) {
      const auto colon = rest.find(':');
      const std::string dir(rest.substr(0, colon));
      text += "ld-path " + one_line(dir) + " " +
              identity_of((dir.empty() ? std::string(".") : dir) + "/libcuda.so.1") + "\n";
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  text += "exe " + identity_of("/proc/self/exe") + "\n";
  return text;
}

std::string node_line(const std::string& path) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) return "node " + one_line(path) + " absent\n";
  return "node " + one_line(path) + " " + std::to_string(s.st_mode) + " " +
         std::to_string(s.st_uid) + " " + std::to_string(s.st_gid) + " " +
         std::to_string(s.st_rdev) + " " +
         (::access(path.c_str(), R_OK | W_OK) == 0 ? "rw" : "no-access") + "\n";
}

}  // namespace

// A system path: the path itself, or for the test suite only (a build with test hooks), the
// same path under $CUDATOOL_TEST_SYSTEM_ROOT (a fake /proc/driver/nvidia, /dev, boot id).
std::string system_path(std::string_view absolute) {
  if (const char* root = test_hook("CUDATOOL_TEST_SYSTEM_ROOT"))
    return std::string(root) + std::string(absolute);
  return std::string(absolute);
}

std::vector<std::string> sorted_entries(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
    if (names.size() > 4096) break;
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// Text that fits on one fingerprint line.
std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\\')
      out += "\\\\";
    else
      out += c;
  }
  return out;
}

// The environment that shapes what the driver enumerates and answers, sorted: of this
// process now, or of `from` (the driver's start, driver_api.hpp).
std::vector<std::string> environment_lines(const std::vector<std::string>* from) {
  std::vector<std::string> all;
  if (from)
    all = *from;
  else
    for (char** e = environ; e && *e; ++e) all.emplace_back(*e);
  std::vector<std::string> lines;
  for (const std::string& text : all) {
    const std::string_view entry(text);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (name == "CUDA_DEVICE") continue;  // cudatool's own choice among the visible devices
    if (name.starts_with("CUDA_") || name.starts_with("__NV") || name.starts_with("LD_") ||
        name == "CUDATOOL_LIBCUDA" || name == "CUDATOOL_LIBNVML" || name == "CUDATOOL_NO_NVML")
      lines.push_back("env " + one_line(entry));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Everything of the machine the driver's answers depend on, that can be read without
// cuInit; nullopt (with `why`) where the machine cannot be described with certainty.
// `nvml` names the GPUs where /proc has none.
std::optional<std::string> machine_lines(const NvmlInventory* nvml, std::string& why) {
  std::string text = "uid " + std::to_string(::geteuid()) + "\n";
  const auto boot = read_system_file(system_path("/proc/sys/kernel/random/boot_id"));
  if (!boot || boot->empty()) {
    why = "no boot id";
    return std::nullopt;
  }
  text += "boot " + one_line(*boot) + "\n";
  // A running MPS server answers some attributes for its clients (SM count, mps_enabled).
  const char* pipe_dir = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string control =
      (pipe_dir && *pipe_dir ? std::string(pipe_dir) : system_path("/tmp/nvidia-mps")) + "/control";
  struct stat s {};
  if (::lstat(control.c_str(), &s) == 0) {
    why = "an MPS server's control pipe is there";
    return std::nullopt;
  }
  const std::string proc = system_path("/proc/driver/nvidia");
  const auto version = read_system_file(proc + "/version");
  const auto gpus = sorted_entries(proc + "/gpus");
  if (version && !gpus.empty()) {
    text += "version " + one_line(*version) + "\n";
    text += "params " + one_line(read_system_file(proc + "/params").value_or("absent")) + "\n";
    for (const std::string& gpu : gpus) {
      const auto information = read_system_file(proc + "/gpus/" + gpu + "/information");
      if (!information) {
        why = "cannot read /proc/driver/nvidia/gpus/" + gpu + "/information";
        return std::nullopt;
      }
      text += "gpu " + one_line(gpu) + " " + one_line(*information) + "\n";
      // "Device Minor:  0" names the GPU's device node.
      if (const auto at = information->find("Device Minor:"); at != std::string::npos) {
        const auto digits = information->find_first_of("0123456789", at);
        const auto end = information->find_first_not_of("0123456789", digits);
        if (digits != std::string::npos)
          text += node_line(system_path("/dev/nvidia") + information->substr(digits, end - digits));
      }
    }
  } else if (nvml) {
    text += "nvml-version " + one_line(nvml->driver_version) + "\n";
    for (const NvmlGpu& gpu : nvml->gpus)
      text += "nvml-gpu " + one_line(gpu.pci_bus_id) + " " + one_line(gpu.uuid) + "\n";
  } else {
    why = "neither /proc/driver/nvidia nor NVML names the GPUs";
    return std::nullopt;
  }
  std::string modules;
  if (const auto all = read_system_file(system_path("/proc/modules"))) {
    std::size_t start = 0;
    while (start < all->size()) {
      const std::size_t end = std::min(all->find('\n', start), all->size());
      const std::string line = all->substr(start, end - start);
      if (line.starts_with("nvidia")) modules += line.substr(0, line.find(' ')) + ",";
      start = end + 1;
    }
  }
  text += "modules " + modules + "\n";
  for (const char* node : {"/dev/nvidiactl", "/dev/nvidia-uvm"})
    text += node_line(system_path(node));
  return text;
}

std::string compose_fingerprint(const std::string& machine,
                                const std::vector<std::string>& environment,
                                const std::string& libcuda) {
  std::string text = "format " + std::to_string(kDeviceCacheFormat) + "\n" + machine;
  for (const auto& line : environment) text += line + "\n";
  return text + library_lines(libcuda);
}

// The whole fingerprint of now, for the entry's library path.
std::optional<std::string> fingerprint(const NvmlInventory* nvml, const std::string& libcuda,
                                       const std::vector<std::string>& environment,
                                       std::string& why) {
  auto machine = machine_lines(nvml, why);
  if (!machine) return std::nullopt;
  return compose_fingerprint(*machine, environment, libcuda);
}

}  // namespace cudatool::detail
