#include "cudatool/device/device_cache.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "base/json_read.hpp"
#include "base/phase_trace.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/sha256.hpp"
#include "cudatool/base/test_hooks.hpp"
#include "cudatool/device/attributes.hpp"
#include "cudatool/device/device.hpp"
#include "device/cached_answers.hpp"
#include "device/cuda_attribute.hpp"
#include "driver/driver_api.hpp"
#include "driver/nvml_inventory.hpp"
#include "driver/nvml_queries.hpp"

namespace cudatool {
namespace {

constexpr int kFormat = 1;
constexpr std::string_view kMagic = "cudatool device cache ";
constexpr std::size_t kMaxEntryBytes = std::size_t{4} << 20;
// System files are a few KiB (/proc/modules the largest); anything larger is not them.
constexpr std::size_t kMaxSystemFileBytes = 256 * 1024;

// A system path: the path itself, or for the test suite only (a build with test hooks), the
// same path under $CUDATOOL_TEST_SYSTEM_ROOT (a fake /proc/driver/nvidia, /dev, boot id).
std::string system_path(std::string_view absolute) {
  if (const char* root = test_hook("CUDATOOL_TEST_SYSTEM_ROOT"))
    return std::string(root) + std::string(absolute);
  return std::string(absolute);
}

// What the warm path spends its time on (bench/devices.sh's figures are whole processes;
// these say which part of one is NVML's, which the entry's).
PhaseTrace& device_trace() {
  static PhaseTrace trace("CUDATOOL_TEST_DEVICE_CACHE_TRACE");
  return trace;
}
void trace_step(const char* what) {
  device_trace().step(what);
}

// The test suite's view of which path was taken and why (a build with test hooks only).
void trace(const DeviceCacheOutcome& outcome) {
  if (!device_trace().on()) return;
  static constexpr const char* kNames[] = {"off", "hit", "refreshed", "cuinit"};
  trace_step("decided");
  // What the command does after the decision (NVML's live values, the output) starts here.
  std::cerr << "device cache: " << kNames[static_cast<int>(outcome.path)]
            << (outcome.why.empty() ? "" : " (" + outcome.why + ")") << " ["
            << device_trace().take() << " ]\n";
  // Once per process: the Python module decides again on every call.
  static const bool at_exit = std::atexit([] {
                                trace_step("exit");
                                std::fprintf(stderr, "device cache: after the decision [%s ]\n",
                                             device_trace().take().c_str());
                              }) == 0;
  (void)at_exit;
}

bool truthy(const char* value) {
  return value != nullptr && *value != '\0' && std::string_view(value) != "0";
}

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
std::vector<std::string> environment_lines(const std::vector<std::string>* from = nullptr) {
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

std::string node_line(const std::string& path) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0) return "node " + one_line(path) + " absent\n";
  return "node " + one_line(path) + " " + std::to_string(s.st_mode) + " " +
         std::to_string(s.st_uid) + " " + std::to_string(s.st_gid) + " " +
         std::to_string(s.st_rdev) + " " +
         (::access(path.c_str(), R_OK | W_OK) == 0 ? "rw" : "no-access") + "\n";
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

// ---- the entry ---------------------------------------------------------------------------

struct Entry {
  std::string fingerprint;  // machine_lines + environment + library_lines
  std::string libcuda_path;
  std::vector<NvmlGpu> nvml;  // the readings taken with the snapshot
  DeviceSnapshot snapshot;
};

std::string serialize_payload(const Entry& e) {
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

std::string serialize(const Entry& e) {
  const std::string payload = serialize_payload(e);
  return std::string(kMagic) + std::to_string(kFormat) + "\nsha256 " + sha256_hex(payload) + "\n" +
         payload;
}

// The entry's JSON payload; nullopt for anything of another shape.
std::optional<Entry> parse_payload(std::string_view payload, std::string& why) {
  try {
    const nlohmann::json j = nlohmann::json::parse(payload);
    Entry e;
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

// The entry in `bytes`, or nullopt for anything not written whole by this format.
// `unverified` (where given) sees the entry before its checksum is computed: the lookup
// starts NVML from it, so that OpenSSL's start and the digest run beside NVML's start.
std::optional<Entry> parse(std::string_view bytes, std::string& why,
                           const std::function<void(const Entry&)>& unverified = {}) {
  if (!bytes.starts_with(kMagic)) {
    why = "entry damaged (no header)";
    return std::nullopt;
  }
  bytes.remove_prefix(kMagic.size());
  const auto eol = bytes.find('\n');
  if (eol == std::string_view::npos || bytes.substr(0, eol) != std::to_string(kFormat)) {
    why = "entry of another format";
    return std::nullopt;
  }
  bytes.remove_prefix(eol + 1);
  if (!bytes.starts_with("sha256 ") || bytes.size() < 7 + 64 + 1 || bytes[7 + 64] != '\n') {
    why = "entry damaged (no checksum)";
    return std::nullopt;
  }
  const std::string_view digest = bytes.substr(7, 64);
  const std::string_view payload = bytes.substr(7 + 64 + 1);
  std::string payload_why;
  std::optional<Entry> entry = parse_payload(payload, payload_why);
  if (entry && unverified) unverified(*entry);
  if (sha256_hex(payload) != digest) {
    why = "entry damaged (checksum)";
    return std::nullopt;
  }
  if (!entry) why = payload_why;
  return entry;
}

// ---- the directory -----------------------------------------------------------------------

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// The cache directory, opened (never through a symbolic link) and created where missing:
// $XDG_CACHE_HOME/cudatool/devices (an absolute XDG_CACHE_HOME only: the XDG spec says a
// relative one is invalid and ignored), else $HOME/.cache/cudatool/devices. The last two
// components are this user's, mode 0700.
Fd open_cache_directory(std::string& why) {
  std::string base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && home[0] == '/') {
    base = std::string(home) + "/.cache";
    ::mkdir(base.c_str(), 0700);  // XDG: created where missing, 0700
  } else {
    why = "no cache directory (neither an absolute XDG_CACHE_HOME nor HOME)";
    return Fd();
  }
  Fd dir(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (const char* component : {"cudatool", "devices"}) {
    if (dir.get() < 0) break;
    if (::mkdirat(dir.get(), component, 0700) != 0 && errno != EEXIST) {
      why = std::string("cannot create the cache directory: ") + std::strerror(errno);
      return Fd();
    }
    Fd next(::openat(dir.get(), component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    dir = std::move(next);
  }
  if (dir.get() < 0) {
    why = "cannot open the cache directory " + base + "/cudatool/devices";
    return Fd();
  }
  struct stat s {};
  if (::fstat(dir.get(), &s) != 0 || s.st_uid != ::geteuid()) {
    why = "the cache directory is not this user's";
    return Fd();
  }
  if ((s.st_mode & 077) != 0 && ::fchmod(dir.get(), 0700) != 0) {
    why = "the cache directory is open to others";
    return Fd();
  }
  return dir;
}

// The entry's file name: one entry per environment that shapes enumeration. Only where to
// look: the entry's fingerprint holds the environment itself, so two environments of one
// name take turns in it and never use each other's answers. std::hash, not SHA-256:
// OpenSSL's start (about 1 ms on the H100 host) would come before NVML's.
std::string entry_name(const std::vector<std::string>& environment) {
  std::string joined;
  for (const auto& line : environment) joined += line + "\n";
  char name[40];
  std::snprintf(name, sizeof name, "%016llx.entry",
                static_cast<unsigned long long>(std::hash<std::string>{}(joined)));
  return name;
}

std::optional<std::string> read_entry(const Fd& dir, const std::string& name, std::string& why) {
  Fd fd(::openat(dir.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    why = errno == ELOOP ? "entry is a symbolic link" : "no entry";
    return std::nullopt;
  }
  struct stat s {};
  if (::fstat(fd.get(), &s) != 0 || !S_ISREG(s.st_mode)) {
    why = "entry is not a regular file";
    return std::nullopt;
  }
  if (s.st_uid != ::geteuid()) {
    why = "entry is another user's";
    return std::nullopt;
  }
  if ((s.st_mode & 077) != 0) {
    why = "entry is open to others";
    return std::nullopt;
  }
  if (static_cast<std::uint64_t>(s.st_size) > kMaxEntryBytes) {
    why = "entry too large";
    return std::nullopt;
  }
  std::string data(static_cast<std::size_t>(s.st_size), '\0');
  if (const ReadOutcome got = read_full(fd.get(), data);
      got.error != 0 || got.bytes < data.size()) {
    why = "entry truncated";
    return std::nullopt;
  }
  return data;
}

// Writes the entry through a temporary file of this process renamed over the name, so a
// reader sees the old entry or the new one, whole.
bool write_entry(const Fd& dir, const std::string& name, const std::string& data) {
  std::random_device random;
  const std::string temporary =
      ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(random()) + "-" + name;
  Fd fd(::openat(dir.get(), temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0600));
  if (fd.get() < 0) return false;
  bool ok = write_all(fd.get(), data) == 0;
  ok = ok && ::fchmod(fd.get(), 0600) == 0;
  if (ok) ok = ::renameat(dir.get(), temporary.c_str(), dir.get(), name.c_str()) == 0;
  if (!ok) ::unlinkat(dir.get(), temporary.c_str(), 0);
  return ok;
}

// ---- the driver's answers ----------------------------------------------------------------

// The file the loader opened for libcuda (its path as the loader names it).
std::string loaded_libcuda_path() {
  const driver::Api& api = driver::api();
  Dl_info info{};
  if (api.cuInit && ::dladdr(reinterpret_cast<void*>(api.cuInit), &info) != 0 && info.dli_fname)
    return info.dli_fname;
  return "";
}

// Everything the cached commands ask the driver, through the driver (cuInit).
DeviceSnapshot read_snapshot() {
  DeviceSnapshot snapshot;
  const std::vector<Device> devices = Device::all();
  snapshot.cuda_version = driver::api().driver_version;
  for (const Device& device : devices) {
    CachedDevice c;
    c.name = device.name();
    c.pci_bus_id = device.pci_bus_id();
    c.uuid = device.uuid();
    c.total_memory = device.total_memory();
    for (const AttributeInfo& info : device_attributes()) {
      int value = 0;
      const CUresult r =
          CUDATOOL_CU_RESULT(cuDeviceGetAttribute, &value, to_cu(info.attribute), device.handle());
      if (r == CUDA_SUCCESS)
        c.attributes.emplace_back(static_cast<int>(info.attribute), value);
      else
        c.rejected.emplace_back(static_cast<int>(info.attribute), static_cast<int>(r));
    }
    snapshot.devices.push_back(std::move(c));
  }
  snapshot.peer_access.assign(devices.size(), std::vector<bool>(devices.size(), false));
  for (std::size_t i = 0; i < devices.size(); ++i)
    for (std::size_t j = 0; j < devices.size(); ++j)
      if (i != j) snapshot.peer_access[i][j] = devices[i].can_access_peer(devices[j]);
  return snapshot;
}

// ---- the process's state -----------------------------------------------------------------

// Which live reading each cached value depends on.
std::optional<std::string> reading_for(DeviceAttribute attribute) {
  switch (to_cu(attribute)) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
      return "compute_mode";
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
      return "ecc";
    case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
      return "display";
    default:
      return std::nullopt;
  }
}

bool mig_enabled(const NvmlGpu& gpu) {
  return gpu.readings.count("mig") && gpu.readings.at("mig").starts_with("0:1");
}

struct State {
  std::mutex mutex;
  std::optional<Entry> entry;             // set on a hit
  std::map<std::string, bool> unchanged;  // reading name -> every GPU's reading unchanged
};

State& state() {
  static State& s = *new State;
  return s;
}

// The NVML GPUs of `a` and `b` are the same GPUs and `reading` is the same on each.
bool same_readings(const std::vector<NvmlGpu>& a, const std::vector<NvmlGpu>& b,
                   const std::string& reading) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].pci_bus_id != b[i].pci_bus_id || a[i].uuid != b[i].uuid) return false;
    const auto x = a[i].readings.find(reading), y = b[i].readings.find(reading);
    if (x == a[i].readings.end() || y == b[i].readings.end() || x->second != y->second)
      return false;
  }
  return true;
}

// Whether `reading` is unchanged on every GPU since the entry was written (State locked).
bool reading_unchanged(State& s, const std::string& reading) {
  if (auto it = s.unchanged.find(reading); it != s.unchanged.end()) return it->second;
  // A setting every GPU lacks cannot change under the same driver and GPUs.
  bool unsupported_everywhere = true;
  for (const NvmlGpu& gpu : s.entry->nvml)
    unsupported_everywhere = unsupported_everywhere && gpu.readings.count(reading) &&
                             nvml_not_supported(gpu.readings.at(reading));
  bool same = unsupported_everywhere;
  if (!same) {
    // This reading alone, live: a command asks for one or two (MIG mode to enumerate, ECC
    // for the memory total), and each is an NVML query per GPU.
    trace_step(("nvml-" + reading).c_str());
    const std::string_view wanted[] = {reading};
    const auto live = nvml_inventory(wanted);
    trace_step("nvml-read");
    same = live && same_readings(s.entry->nvml, live->gpus, reading);
  }
  s.unchanged[reading] = same;
  return same;
}

std::string compose(const std::string& machine, const std::vector<std::string>& environment,
                    const std::string& libcuda) {
  std::string text = "format " + std::to_string(kFormat) + "\n" + machine;
  for (const auto& line : environment) text += line + "\n";
  return text + library_lines(libcuda);
}

// The whole fingerprint of now, for the entry's library path.
std::optional<std::string> fingerprint(const NvmlInventory* nvml, const std::string& libcuda,
                                       const std::vector<std::string>& environment,
                                       std::string& why) {
  auto machine = machine_lines(nvml, why);
  if (!machine) return std::nullopt;
  return compose(*machine, environment, libcuda);
}

// The cuInit path with the entry written where it can be: the NVML readings and the
// fingerprint are taken before and after the driver's answers, and the entry is written
// only where they did not change in between (a setting changed meanwhile is not kept).
DeviceCacheOutcome refresh(const Fd& dir, const std::string& name,
                           const std::vector<std::string>& environment) {
  DeviceCacheOutcome outcome{DeviceCachePath::cuinit, ""};
  const auto before = nvml_inventory();
  if (!before) {
    std::string why;
    outcome.why = nvml_available(&why) ? "NVML cannot list the GPUs" : "no NVML: " + why;
    return outcome;
  }
  for (const NvmlGpu& gpu : before->gpus)
    if (mig_enabled(gpu)) {
      outcome.why = "a GPU is in MIG mode";
      return outcome;
    }
  std::string why;
  std::optional<std::string> machine_before = machine_lines(&*before, why);
  if (!machine_before) {
    outcome.why = why;
    return outcome;
  }
  Entry entry;
  try {
    entry.snapshot = read_snapshot();
    entry.libcuda_path = loaded_libcuda_path();
  } catch (const std::exception& e) {
    // The command's own calls meet the same error and report it.
    outcome.why = std::string("the driver: ") + e.what();
    return outcome;
  }
  if (entry.libcuda_path.empty()) {
    outcome.why = "cannot tell which file libcuda is";
    return outcome;
  }
  // The driver answers as it started: a process that changed CUDA_VISIBLE_DEVICES (or
  // another setting) since then must not file those answers under the new setting.
  if (const auto* started = driver::start_environment();
      started && environment_lines(started) != environment) {
    outcome.why = "the driver started under another environment";
    return outcome;
  }
  const auto after = nvml_inventory();
  const auto machine_after = machine_lines(after ? &*after : nullptr, why);
  if (!after || !machine_after || *machine_after != *machine_before) {
    outcome.why = "the machine changed while it was read";
    return outcome;
  }
  for (const std::string reading : {"mig", "ecc", "compute_mode", "display"})
    if (!same_readings(before->gpus, after->gpus, reading)) {
      outcome.why = "a setting changed while it was read";
      return outcome;
    }
  const auto fingerprint_after = compose(*machine_after, environment, entry.libcuda_path);
  entry.fingerprint = fingerprint_after;
  entry.nvml = after->gpus;
  if (!write_entry(dir, name, serialize(entry))) {
    outcome.why = std::string("cannot write the entry: ") + std::strerror(errno);
    return outcome;
  }
  outcome.path = DeviceCachePath::refreshed;
  return outcome;
}

DeviceCacheOutcome choose(bool fresh, std::string_view fresh_source) {
  DeviceCacheOutcome outcome;
  // A driver named by CUDATOOL_LIBCUDA (tests' fake driver, a driver being tried) answers
  // as its own settings say, which nothing here can see: it is asked every time. The test
  // suite lets its fake driver be cached (its settings then match the fake /proc).
  if (const char* libcuda = std::getenv("CUDATOOL_LIBCUDA");
      libcuda && *libcuda && !test_hook("CUDATOOL_TEST_DEVICE_CACHE_WITH_LIBCUDA")) {
    outcome.why = "CUDATOOL_LIBCUDA is set";
    return outcome;
  }
  if (truthy(std::getenv("CUDATOOL_NO_NVML"))) {
    outcome.why = "CUDATOOL_NO_NVML is set";
    return outcome;
  }
  Fd dir = open_cache_directory(outcome.why);
  if (dir.get() < 0) return outcome;
  const std::vector<std::string> environment = environment_lines();
  trace_step("start");
  const std::string name = entry_name(environment);
  trace_step("name");
  if (fresh || truthy(std::getenv("CUDATOOL_FRESH"))) {
    const std::string asked(fresh ? fresh_source : "CUDATOOL_FRESH");
    outcome = refresh(dir, name, environment);
    if (outcome.path == DeviceCachePath::cuinit) outcome.why = asked + "; " + outcome.why;
    if (outcome.path == DeviceCachePath::refreshed) outcome.why = asked;
    return outcome;
  }
  std::string why;
  trace_step("entry");
  auto bytes = read_entry(dir, name, why);
  // /proc names the GPUs without NVML; without /proc, NVML does.
  const bool proc_has_gpus =
      bytes && !sorted_entries(system_path("/proc/driver/nvidia") + "/gpus").empty();
  // Where NVML will be asked (no /proc, or MIG mode on GPUs that have it), its start (most
  // of a hit's time on such a machine) runs beside the checksum and the fingerprint.
  const auto start_nvml_if_asked = [&](const Entry& unverified) {
    bool mig_somewhere = false;
    for (const NvmlGpu& gpu : unverified.nvml)
      mig_somewhere = mig_somewhere || !gpu.readings.count("mig") ||
                      !nvml_not_supported(gpu.readings.at("mig"));
    if (!proc_has_gpus || mig_somewhere) start_nvml();
  };
  std::optional<Entry> entry = bytes ? parse(*bytes, why, start_nvml_if_asked) : std::nullopt;
  trace_step("parsed");
  if (entry) {
    std::optional<NvmlInventory> nvml;
    if (!proc_has_gpus) nvml = nvml_inventory({});
    const auto now = fingerprint(nvml ? &*nvml : nullptr, entry->libcuda_path, environment, why);
    trace_step("fingerprint");
    if (!now) {
      entry.reset();
    } else if (*now != entry->fingerprint) {
      why = "the machine, driver or environment changed";
      entry.reset();
    }
    if (entry) {
      State& s = state();
      std::lock_guard lock(s.mutex);
      s.entry = std::move(entry);
      // Readings are live for this lookup only: the Python module looks up again on every
      // call, and a setting changed since its last call must be read again.
      s.unchanged.clear();
      // Enumeration depends on MIG mode on GPUs that have it.
      if (reading_unchanged(s, "mig")) {
        outcome.path = DeviceCachePath::hit;
        return outcome;
      }
      why = "MIG mode changed or cannot be read";
      s.entry.reset();
    }
  }
  outcome = refresh(dir, name, environment);
  if (outcome.path == DeviceCachePath::refreshed) outcome.why = why;
  if (outcome.path == DeviceCachePath::cuinit) outcome.why = why + "; " + outcome.why;
  return outcome;
}

}  // namespace

DeviceCacheOutcome use_device_cache(bool fresh, std::string_view fresh_source) {
  DeviceCacheOutcome outcome;
  try {
    outcome = choose(fresh, fresh_source);
  } catch (const std::exception& e) {
    // Never worse than without the cache: the cuInit path.
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.entry.reset();
    outcome = {DeviceCachePath::cuinit, std::string("cache error: ") + e.what()};
  }
  trace(outcome);
  return outcome;
}

const DeviceSnapshot* cached_devices() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.entry ? &s.entry->snapshot : nullptr;
}

namespace detail {

std::optional<std::string> reformat_device_cache_entry(std::string_view bytes) {
  std::string why;
  const auto entry = parse(bytes, why);
  return entry ? std::optional<std::string>(serialize(*entry)) : std::nullopt;
}

std::optional<std::string> reformat_device_cache_payload(std::string_view payload) {
  std::string why;
  const auto entry = parse_payload(payload, why);
  return entry ? std::optional<std::string>(serialize_payload(*entry)) : std::nullopt;
}

std::optional<CachedAttribute> cached_attribute(int ordinal, DeviceAttribute attribute) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.entry || ordinal < 0 ||
      static_cast<std::size_t>(ordinal) >= s.entry->snapshot.devices.size())
    return std::nullopt;
  if (const auto reading = reading_for(attribute); reading && !reading_unchanged(s, *reading))
    return std::nullopt;
  const CachedDevice& d = s.entry->snapshot.devices[static_cast<std::size_t>(ordinal)];
  for (const auto& [a, v] : d.attributes)
    if (a == static_cast<int>(attribute)) return CachedAttribute{false, v};
  for (const auto& [a, r] : d.rejected)
    if (a == static_cast<int>(attribute)) return CachedAttribute{true, r};
  return std::nullopt;
}

std::optional<std::uint64_t> cached_total_memory(int ordinal) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.entry || ordinal < 0 ||
      static_cast<std::size_t>(ordinal) >= s.entry->snapshot.devices.size())
    return std::nullopt;
  // ECC on reserves memory on some GPUs.
  if (!reading_unchanged(s, "ecc")) return std::nullopt;
  return s.entry->snapshot.devices[static_cast<std::size_t>(ordinal)].total_memory;
}

}  // namespace detail
}  // namespace cudatool
