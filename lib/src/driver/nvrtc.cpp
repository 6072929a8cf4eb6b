#include "driver/nvrtc.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <mutex>
#include <optional>
#include <utility>

#include "cudatool/base/error.hpp"
#include "driver/dynamic_library.hpp"

namespace cudatool::driver::nvrtc {
namespace {

constexpr const char* kSonames[] = {"libnvrtc.so.13", "libnvrtc.so"};
constexpr const char* kInstallHint =
    "install NVRTC from the CUDA toolkit (the cuda-nvrtc-13-0 package, or the whole "
    "toolkit), or point CUDA_HOME or CUDATOOL_LIBNVRTC at it";

std::optional<std::string> override_path() {
  const char* value = std::getenv("CUDATOOL_LIBNVRTC");
  if (value && *value) return std::string(value);
  return std::nullopt;
}

struct Loaded {
  DynamicLibrary library;
  Api api;
};

Loaded load() {
  Loaded loaded;
  const auto candidates = library_candidates();
  try {
    loaded.library = DynamicLibrary::open_first(candidates, "NVRTC not found");
  } catch (const LibraryNotFoundError& e) {
    throw LibraryNotFoundError(std::string(e.what()) + "; " + kInstallHint, "libnvrtc.so.13");
  }
  loaded.api.library_path = loaded.library.path();
#define CUDATOOL_NVRTC_RESOLVE(name)                                                            \
  loaded.api.name = reinterpret_cast<decltype(loaded.api.name)>(loaded.library.symbol(#name));  \
  if (loaded.api.name == nullptr)                                                               \
    throw LibraryNotFoundError(                                                                 \
        "NVRTC too old (" + loaded.api.library_path + "): it lacks " #name "; " + kInstallHint, \
        "libnvrtc.so.13");
  CUDATOOL_NVRTC_FUNCTIONS(CUDATOOL_NVRTC_RESOLVE)
#undef CUDATOOL_NVRTC_RESOLVE
  check(loaded.api.nvrtcVersion(&loaded.api.major, &loaded.api.minor), "nvrtcVersion");
  return loaded;
}

struct State {
  std::once_flag once;
  std::optional<Loaded> loaded;
  std::exception_ptr error;
};

// Never destroyed, so the library is never unloaded: unloading it at exit gains nothing
// and would leave what it allocated for itself unreachable (LeakSanitizer then reports
// NVRTC's own buffers).
State& state() {
  static State& s = *new State;
  return s;
}

}  // namespace

std::vector<std::string> library_candidates() {
  if (auto path = override_path()) return {*path};
  std::vector<std::string> candidates;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* root = std::getenv(env);
    if (root == nullptr || *root == '\0') continue;
    for (const char* soname : kSonames)
      candidates.push_back(std::string(root) + "/lib64/" + soname);
  }
  for (const char* soname : kSonames)
    candidates.push_back(std::string("/usr/local/cuda/lib64/") + soname);
  for (const char* soname : kSonames) candidates.emplace_back(soname);
  return candidates;
}

std::string locate_library() {
  for (const auto& candidate : library_candidates()) {
    if (candidate.find('/') == std::string::npos) continue;  // a bare soname: the loader's
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode)) return candidate;
  }
  // The loader's path: LD_LIBRARY_PATH first, as the loader reads it.
  if (!override_path()) {
    if (const char* paths = std::getenv("LD_LIBRARY_PATH")) {
      std::string all = paths;
      std::size_t start = 0;
      while (start <= all.size()) {
        const std::size_t end = std::min(all.find(':', start), all.size());
        const std::string dir = all.substr(start, end - start);
        for (const char* soname : kSonames) {
          if (dir.empty()) continue;
          const std::string path = dir + "/" + soname;
          struct stat info {};
          if (::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode)) return path;
        }
        start = end + 1;
      }
    }
  }
  return "";
}

const Api& api() {
  State& s = state();
  std::call_once(s.once, [&] {
    try {
      s.loaded.emplace(load());
    } catch (...) {
      s.error = std::current_exception();
    }
  });
  if (s.error) std::rethrow_exception(s.error);
  return s.loaded->api;
}

void check(nvrtcResult result, const char* call) {
  if (result == NVRTC_SUCCESS) return;
  std::string message = "NVRTC error " + std::to_string(static_cast<int>(result));
  try {
    if (const char* text = api().nvrtcGetErrorString(result)) message = text;
  } catch (const Error&) {
  }
  // A failed NVRTC call carries its result, as a driver call does (exit 5).
  throw RuntimeError(call, static_cast<int>(result), message, "");
}

std::vector<int> supported_archs() {
  const Api& a = api();
  int count = 0;
  check(a.nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (count > 0) check(a.nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

Program::Program(const std::string& source, const std::string& name) {
  check(api().nvrtcCreateProgram(&program_, source.c_str(), name.c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
}

Program::Program(Program&& other) noexcept : program_(std::exchange(other.program_, nullptr)) {}

Program& Program::operator=(Program&& other) noexcept {
  if (this != &other) {
    destroy();
    program_ = std::exchange(other.program_, nullptr);
  }
  return *this;
}

Program::~Program() {
  destroy();
}

void Program::destroy() noexcept {
  if (program_ != nullptr) {
    api().nvrtcDestroyProgram(&program_);
    program_ = nullptr;
  }
}

bool Program::compile(const std::vector<std::string>& options) {
  std::vector<const char*> pointers;
  pointers.reserve(options.size());
  for (const auto& option : options) pointers.push_back(option.c_str());
  const nvrtcResult result = api().nvrtcCompileProgram(
      program_, static_cast<int>(pointers.size()), pointers.empty() ? nullptr : pointers.data());
  if (result == NVRTC_ERROR_COMPILATION || result == NVRTC_ERROR_INVALID_OPTION) return false;
  check(result, "nvrtcCompileProgram");
  return true;
}

std::string Program::log() const {
  std::size_t size = 0;
  check(api().nvrtcGetProgramLogSize(program_, &size), "nvrtcGetProgramLogSize");
  std::string text(size, '\0');
  if (size > 0) check(api().nvrtcGetProgramLog(program_, text.data()), "nvrtcGetProgramLog");
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::string Program::ptx() const {
  std::size_t size = 0;
  if (api().nvrtcGetPTXSize(program_, &size) != NVRTC_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  check(api().nvrtcGetPTX(program_, text.data()), "nvrtcGetPTX");
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

std::vector<std::uint8_t> Program::cubin() const {
  std::size_t size = 0;
  if (api().nvrtcGetCUBINSize(program_, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::vector<std::uint8_t> image(size);
  check(api().nvrtcGetCUBIN(program_, reinterpret_cast<char*>(image.data())), "nvrtcGetCUBIN");
  return image;
}

}  // namespace cudatool::driver::nvrtc
