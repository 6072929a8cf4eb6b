#include "cudatool/compile/compiler.hpp"
#include "base/json_read.hpp"
#include "cudatool/base/file_io.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <system_error>

#include "cudatool/base/error.hpp"
#include "cudatool/base/sha256.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/process.hpp"
#include "driver/nvrtc.hpp"

namespace cudatool {
namespace fs = std::filesystem;
namespace {

// An intermediate file (--keep, nvcc's input): whole, or removed. A file system that
// refuses it (full, read-only) is the environment's problem, not the driver's: UsageError.
void write_text(const fs::path& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw UsageError("cannot write " + path.string() + ": " + std::strerror(errno));
  std::size_t written = 0;
  int error = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(path.c_str());
    throw UsageError("cannot write " + path.string() + ": " + std::strerror(error));
  }
}

bool blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); });
}

// "<real path>|<size>|<mtime ns>": changes when the file is replaced or upgraded.
std::string file_identity(const std::string& path) {
  std::error_code ec;
  const fs::path real = fs::canonical(path, ec);
  const std::string name = ec ? path : real.string();
  struct stat info {};
  if (::stat(name.c_str(), &info) != 0) return name;
  return name + "|" + std::to_string(info.st_size) + "|" + std::to_string(info.st_mtim.tv_sec) +
         "." + std::to_string(info.st_mtim.tv_nsec);
}

bool executable(const fs::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

// nvcc: CUDATOOL_NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, then PATH.
std::string find_nvcc() {
  if (const char* path = std::getenv("CUDATOOL_NVCC"); path && *path) {
    if (executable(path)) return path;
    throw LibraryNotFoundError(std::string("nvcc not found (CUDATOOL_NVCC=") + path + ")", "nvcc");
  }
  std::vector<fs::path> candidates;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(env); root && *root)
      candidates.push_back(fs::path(root) / "bin" / "nvcc");
  candidates.emplace_back("/usr/local/cuda/bin/nvcc");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      if (!dir.empty()) candidates.push_back(fs::path(dir) / "nvcc");
  }
  for (const auto& candidate : candidates)
    if (executable(candidate)) return candidate.string();
  throw LibraryNotFoundError(
      "nvcc not found (looked in $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin and "
      "PATH): install the CUDA toolkit or set CUDATOOL_NVCC",
      "nvcc");
}

std::string nvcc_version(const std::string& nvcc) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(nvcc); it != known.end()) return it->second;
  const ChildResult out = run_nvcc_process({nvcc, "--version"});
  std::string version = "unknown";
  if (const auto pos = out.output.find(", V"); pos != std::string::npos) {
    const auto end = out.output.find_first_of("\r\n", pos);
    version = out.output.substr(pos + 3, end - pos - 3);
  }
  known[nvcc] = version;
  return version;
}

// The NVRTC library's file: found by stat where possible (no loading), else the loaded one.
std::string nvrtc_library_file() {
  std::string path = nvrtc::locate_library();
  if (!path.empty()) return path;
  const nvrtc::Api& api = nvrtc::api();  // throws LibraryNotFoundError when absent
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(api.nvrtcVersion), &info) != 0 && info.dli_fname)
    return info.dli_fname;
  return api.library_path;
}

OutputKind output_of(const CompileRequest& r) {
  return r.output.value_or(r.arch.real() ? OutputKind::cubin : OutputKind::ptx);
}

// The architecture the compiler is asked for: PTX alone needs no real target.
Arch target_of(const CompileRequest& r) {
  Arch arch = r.arch;
  if (output_of(r) == OutputKind::ptx) arch.code = Arch::Code::ptx;
  return arch;
}

// Where in the text a byte the compilers cannot take sits (NUL ends NVRTC's C string, 0xFF
// is its end-of-file mark): "line L, column C".
std::optional<std::string> forbidden_byte(std::string_view text, unsigned char* which) {
  std::size_t line = 1, column = 1;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == 0 || c == 0xff) {
      *which = c;
      return "line " + std::to_string(line) + ", column " + std::to_string(column);
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return std::nullopt;
}

void validate(const CompileRequest& r) {
  unsigned char byte = 0;
  if (auto where = forbidden_byte(r.source, &byte)) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", byte);
    throw UsageError(r.source_name + ": byte " + hex + " at " + *where +
                     ": not a text source (the compiler would stop reading there)");
  }
  if (blank(r.source)) throw UsageError(r.source_name + ": empty source");
  if (r.arch.number() == 0) throw UsageError("no target architecture given");
  if (output_of(r) == OutputKind::cubin && !r.arch.real()) {
    Arch real = r.arch;
    real.code = Arch::Code::sass;
    throw UsageError("a CUBIN needs a real architecture (" + real.str() + "), not " + r.arch.str());
  }
  if (r.maxrregcount < 0 || r.maxrregcount > 255)
    throw UsageError("--maxrregcount " + std::to_string(r.maxrregcount) + ": expected 1 to 255");
  if (!r.std.empty() && r.std != "c++11" && r.std != "c++14" && r.std != "c++17" &&
      r.std != "c++20")
    throw UsageError("--std " + r.std + ": expected c++11, c++14, c++17 or c++20");
  if (r.engine == Engine::nvrtc && !r.nvcc_options.empty())
    throw UsageError("-Xnvcc " + r.nvcc_options.front() +
                     ": nvcc options given, but --compiler nvrtc runs NVRTC");
  if (r.engine == Engine::nvcc && !r.nvrtc_options.empty())
    throw UsageError("-Xnvrtc " + r.nvrtc_options.front() +
                     ": NVRTC options given, but --compiler nvcc runs nvcc");
}

struct IncludeScan {
  std::vector<fs::path> found;
  std::vector<std::string> unresolved;  // names found nowhere: host headers or missing ones
  std::vector<std::string> toolkit;     // names found in CUDA's include directories
  bool has_main = false;
  bool static_kernels = false;               // `static __global__` (internal linkage)
  bool anonymous_namespace_kernels = false;  // __global__ in a file with `namespace {`
};

bool identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Whether a `__global__` of `text` is declared static: the word `static` in the same
// declaration (back to the previous ';', '{', '}' or line start of a directive).
bool declares_static_kernel(const std::string& text) {
  std::size_t pos = 0;
  while ((pos = text.find("__global__", pos)) != std::string::npos) {
    const std::size_t begin = text.find_last_of(";{}#", pos) == std::string::npos
                                  ? 0
                                  : text.find_last_of(";{}#", pos) + 1;
    std::size_t end = text.find('(', pos);
    if (end == std::string::npos) end = text.size();
    for (std::size_t s = text.find("static", begin); s != std::string::npos && s < end;
         s = text.find("static", s + 6)) {
      const bool whole = (s == 0 || !identifier_char(text[s - 1])) &&
                         (s + 6 >= text.size() || !identifier_char(text[s + 6]));
      if (whole) return true;
    }
    pos += 10;
  }
  return false;
}

// Whether `text` opens an anonymous namespace (`namespace {`).
bool opens_anonymous_namespace(const std::string& text) {
  std::size_t pos = 0;
  while ((pos = text.find("namespace", pos)) != std::string::npos) {
    const bool start = pos == 0 || !identifier_char(text[pos - 1]);
    std::size_t after = pos + 9;
    while (after < text.size() && std::isspace(static_cast<unsigned char>(text[after]))) ++after;
    if (start && after < text.size() && text[after] == '{') return true;
    pos += 9;
  }
  return false;
}

void scan_linkage(const std::string& text, IncludeScan& scan) {
  if (text.find("__global__") == std::string::npos) return;
  if (!scan.static_kernels) scan.static_kernels = declares_static_kernel(text);
  if (!scan.anonymous_namespace_kernels)
    scan.anonymous_namespace_kernels = opens_anonymous_namespace(text);
}

// `#include "x"` / `#include <x>` names of one file, in order.
std::vector<std::pair<std::string, bool>> include_lines(const std::string& text) {
  std::vector<std::pair<std::string, bool>> names;  // (name, quoted)
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    std::size_t i = line.find_first_not_of(" \t");
    if (i == std::string_view::npos || line[i] != '#') continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string_view::npos || line.substr(i, 7) != "include") continue;
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string_view::npos) continue;
    const char open = line[i];
    const char close = open == '"' ? '"' : open == '<' ? '>' : 0;
    if (close == 0) continue;
    const std::size_t stop = line.find(close, i + 1);
    if (stop == std::string_view::npos) continue;
    names.emplace_back(std::string(line.substr(i + 1, stop - i - 1)), open == '"');
  }
  return names;
}

// A `main(` at the start of a declaration: `int main(`, `int main (void)`.
bool defines_main(const std::string& text) {
  std::size_t pos = 0;
  while ((pos = text.find("main", pos)) != std::string::npos) {
    const bool start = pos == 0 || !(std::isalnum(static_cast<unsigned char>(text[pos - 1])) ||
                                     text[pos - 1] == '_');
    std::size_t after = pos + 4;
    while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) ++after;
    if (start && after < text.size() && text[after] == '(') {
      std::size_t before = pos;
      while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t')) --before;
      if (before >= 3 && text.compare(before - 3, 3, "int") == 0) return true;
    }
    pos += 4;
  }
  return false;
}

IncludeScan scan_includes(const CompileRequest& r) {
  IncludeScan scan;
  const fs::path source_dir = r.source_dir.empty() ? fs::path(".") : r.source_dir;
  const std::vector<std::string> toolkit = toolkit_include_dirs();
  std::set<std::string> seen;
  struct Pending {
    std::string text;
    fs::path dir;
    int depth;
  };
  scan.has_main = defines_main(r.source);
  scan_linkage(r.source, scan);
  std::vector<Pending> stack{{r.source, source_dir, 0}};
  while (!stack.empty()) {
    Pending current = std::move(stack.back());
    stack.pop_back();
    if (current.depth > 64) continue;
    for (const auto& [name, quoted] : include_lines(current.text)) {
      std::vector<fs::path> dirs;
      if (quoted) dirs.push_back(current.dir);
      for (const auto& dir : r.include_dirs) dirs.emplace_back(dir);
      dirs.push_back(source_dir);
      bool resolved = false;
      for (const auto& dir : dirs) {
        const fs::path candidate = (dir / name).lexically_normal();
        std::error_code ec;
        if (!fs::is_regular_file(candidate, ec)) continue;
        resolved = true;
        if (!seen.insert(candidate.string()).second) break;
        scan.found.push_back(candidate);
        if (auto text = detail::read_file(candidate)) {
          if (!scan.has_main) scan.has_main = defines_main(*text);
          scan_linkage(*text, scan);
          stack.push_back({std::move(*text), candidate.parent_path(), current.depth + 1});
        }
        break;
      }
      if (resolved) continue;
      for (const auto& dir : toolkit) {
        std::error_code ec;
        if (fs::is_regular_file(fs::path(dir) / name, ec)) {
          resolved = true;
          if (seen.insert("<toolkit>" + name).second) scan.toolkit.push_back(name);
          break;
        }
      }
      if (!resolved && seen.insert("<unresolved>" + name).second) scan.unresolved.push_back(name);
    }
  }
  return scan;
}

// CUDA headers that exist in $CUDA/include but are host API: NVRTC cannot compile them.
bool host_toolkit_header(const std::string& name) {
  static const char* const host[] = {"cuda_runtime.h",
                                     "cuda_runtime_api.h",
                                     "cuda.h",
                                     "cudaProfiler.h",
                                     "cuda_profiler_api.h",
                                     "nvrtc.h",
                                     "cublas_v2.h",
                                     "cublas.h",
                                     "cufft.h",
                                     "curand.h",
                                     "cusparse.h",
                                     "cusolverDn.h",
                                     "cuda_gl_interop.h",
                                     "nvml.h",
                                     "nvtx3/nvToolsExt.h"};
  for (const char* h : host)
    if (name == h) return true;
  return name.rfind("thrust/", 0) == 0;
}

// nvcc's language switches NVRTC 13 has no option for (it refuses --extended-lambda and
// --expt-relaxed-constexpr in every spelling as "unrecognized option"; its documented
// options have neither): a file built with them compiles under nvcc only.
bool nvcc_only_language_option(const std::string& option) {
  for (const char* name :
       {"--extended-lambda", "-extended-lambda", "--expt-extended-lambda", "-expt-extended-lambda",
        "--expt-relaxed-constexpr", "-expt-relaxed-constexpr"})
    if (option == name) return true;
  return false;
}

EngineChoice choose_engine_from(const CompileRequest& r, const IncludeScan& scan) {
  if (r.engine) return {*r.engine, "--compiler " + std::string(to_string(*r.engine))};
  for (const auto& option : r.nvcc_options)
    if (nvcc_only_language_option(option))
      return {Engine::nvcc, option + ": an nvcc option NVRTC has no equivalent for"};
  if (!r.nvcc_options.empty() && r.nvrtc_options.empty())
    return {Engine::nvcc, "-Xnvcc options given"};
  for (const auto& name : scan.unresolved)
    return {Engine::nvcc, "host code: <" + name + "> is a host header NVRTC has not got"};
  for (const auto& name : scan.toolkit)
    if (host_toolkit_header(name)) return {Engine::nvcc, "host code: <" + name + "> is host API"};
  if (scan.has_main) return {Engine::nvcc, "host code: the file defines main"};
  // Kernels with internal linkage: nvcc names them from the file's real path
  // (_GLOBAL__N__<hash>_..., and __nv_static_<hash>_... under -rdc); NVRTC names them
  // otherwise, so only nvcc gives the names the user's build has.
  if (scan.anonymous_namespace_kernels)
    return {Engine::nvcc,
            "kernels in an anonymous namespace: their names come from the file's path under "
            "nvcc, not under NVRTC"};
  if (r.rdc && scan.static_kernels)
    return {Engine::nvcc,
            "static __global__ under -rdc: nvcc names it __nv_static_<hash>_... from the "
            "file's path, NVRTC does not"};
  for (const auto& name : scan.toolkit)
    if (name.rfind("cub/", 0) == 0)
      return {Engine::nvcc,
              "<" + name + ">: CUB's code under NVRTC can differ from the nvcc build's"};
  return {Engine::nvrtc, "device code only"};
}

std::string first_error_line(const std::string& log) {
  std::stringstream lines(log);
  std::string line;
  while (std::getline(lines, line))
    if (line.find("error") != std::string::npos) return line;
  return "";
}

[[noreturn]] void throw_compile_error(const CompileRequest& r, const std::string& log,
                                      const std::vector<std::string>& options,
                                      const std::string& compiler) {
  std::string what =
      r.source_name + ": compilation failed (" + compiler + ", " + target_of(r).str() + ")";
  if (const std::string line = first_error_line(log); !line.empty()) what += ": " + line;
  throw CompileError(what, log, options, compiler);
}

struct Dependency {
  std::string path;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256;
};

bool stat_of(const std::string& path, std::uint64_t* size, std::int64_t* mtime_ns) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  *size = static_cast<std::uint64_t>(info.st_size);
  *mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
  return true;
}

std::vector<Dependency> record_dependencies(const std::vector<fs::path>& paths) {
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

// True when every recorded header is as it was: same size and mtime, or else same content.
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

struct Compiled {
  CompileResult result;
  std::vector<Dependency> deps;
};

std::string serialize(const Compiled& c) {
  const CompileResult& r = c.result;
  nlohmann::json deps = nlohmann::json::array();
  for (const auto& d : c.deps)
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

std::string stem_of(const std::string& name) {
  std::string stem = fs::path(name).stem().string();
  for (char& c : stem)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return stem.empty() || stem[0] == '.' ? "kernel" + stem : stem;
}

// The name as a #line string literal: quotes and backslashes escaped, control characters
// and bytes that are not UTF-8 replaced by '?' (a newline would end the directive).
std::string line_directive_name(const std::string& name) {
  std::string out;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      const std::size_t need = (c & 0xe0) == 0xc0   ? 1
                               : (c & 0xf0) == 0xe0 ? 2
                               : (c & 0xf8) == 0xf0 ? 3
                                                    : 0;
      bool ok = need > 0;
      for (std::size_t k = 1; ok && k <= need; ++k)
        ok = i + k < name.size() && (static_cast<unsigned char>(name[i + k]) & 0xc0) == 0x80;
      if (!ok) {
        out += '?';
        continue;
      }
      out.append(name, i, need + 1);
      i += need;
    }
  }
  return out;
}

CompileResult compile_nvrtc(const CompileRequest& r) {
  const nvrtc::Api& api = nvrtc::api();
  const Arch target = target_of(r);
  const auto supported = nvrtc::supported_archs();
  if (std::find(supported.begin(), supported.end(), target.number()) == supported.end()) {
    std::string list;
    for (int cc : supported)
      list += (list.empty() ? "" : ", ") + std::string("sm_") + std::to_string(cc);
    throw UsageError("--arch " + r.arch.str() + ": NVRTC " + api.version() +
                     " cannot target it (it supports " + list + ")");
  }
  CompileResult result;
  result.arch = r.arch;
  result.output = output_of(r);
  result.compiler = "nvrtc";
  result.compiler_version = api.version();
  result.options = build_options(r, Engine::nvrtc);
  const std::string source = prepared_source(r);
  nvrtc::Program program(source, r.source_name);
  const auto start = std::chrono::steady_clock::now();
  const bool ok = program.compile(result.options);
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.log = cap_compiler_output(program.log());
  if (r.keep_dir) {
    const std::string stem = stem_of(r.source_name);
    auto keep = [&](const std::string& name, std::string_view data) {
      write_text(*r.keep_dir / name, data);
      result.kept_files.push_back((*r.keep_dir / name).string());
    };
    keep(stem + ".prepared.cu", source);
    std::string options;
    for (const auto& o : result.options) options += o + "\n";
    keep(stem + ".options", options);
    keep(stem + ".log", result.log);
    if (ok) {
      if (const std::string ptx = program.ptx(); !ptx.empty()) keep(stem + ".ptx", ptx);
      if (const auto cubin = program.cubin(); !cubin.empty())
        keep(stem + ".cubin",
             std::string_view(reinterpret_cast<const char*>(cubin.data()), cubin.size()));
    }
  }
  if (!ok) throw_compile_error(r, result.log, result.options, "NVRTC " + api.version());
  if (result.output == OutputKind::cubin) {
    const auto cubin = program.cubin();
    result.image.assign(reinterpret_cast<const char*>(cubin.data()), cubin.size());
  } else {
    result.image = program.ptx();
  }
  if (result.image.empty())
    throw LibraryNotFoundError("NVRTC " + api.version() + " (" + api.library_path +
                                   ") produced no " + std::string(to_string(result.output)) +
                                   " for " + r.source_name + ": not a working NVRTC",
                               "libnvrtc.so.13");
  return result;
}

fs::path make_temporary_dir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp && *tmp ? tmp : "/tmp";
  std::string pattern = base + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw UsageError(std::string(tmp && *tmp ? "TMPDIR=" : "") + base +
                     ": cannot create a temporary directory there: " + std::strerror(errno));
  return pattern;
}

// Whether nvcc compiles the user's file where it is (see CompileRequest::source_path): not
// for stdin or the extern "C" wrap, and not for a file whose name nvcc could not hand to its
// shell as plain text (a newline in it: process.hpp); those get a copy.
bool compiles_in_place(const CompileRequest& r) {
  if (r.source_path.empty() || r.extern_c) return false;
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(r.source_path, ec), ec);
  return !nvcc_shell_hazard(r.source_path.string(), NvccQuoting::double_quoted) &&
         (ec || !nvcc_shell_hazard(real.string(), NvccQuoting::double_quoted));
}

CompileResult compile_nvcc(const CompileRequest& r) {
  const std::string nvcc = find_nvcc();
  CompileResult result;
  result.arch = r.arch;
  result.output = output_of(r);
  result.compiler = "nvcc";
  result.compiler_version = nvcc_version(nvcc);
  result.options = build_options(r, Engine::nvcc);
  fs::path dir;
  bool temporary = false;
  if (r.keep_dir) {
    dir = *r.keep_dir;
  } else {
    dir = make_temporary_dir("cudatool-nvcc");  // mode 0700 (mkdtemp)
    temporary = true;
  }
  struct Cleanup {
    fs::path dir;
    bool active;
    ~Cleanup() {
      std::error_code ec;
      if (active) fs::remove_all(dir, ec);
    }
  } cleanup{dir, temporary};
  const std::string stem = stem_of(r.source_name);
  const fs::path output = dir / (stem + (result.output == OutputKind::cubin ? ".cubin" : ".ptx"));
  fs::path source = r.source_path;
  if (!compiles_in_place(r)) {
    // stdin, or the extern "C" wrap: the text exists only here, so nvcc gets a copy.
    source = dir / (stem + ".cu");
    write_text(source, prepared_source(r));
  }
  std::vector<std::string> argv{nvcc};
  argv.insert(argv.end(), result.options.begin(), result.options.end());
  if (r.keep_dir) {
    argv.push_back("--keep");
    argv.push_back("--keep-dir=" + dir.string());
  }
  argv.push_back("-o");
  argv.push_back(output.string());
  argv.push_back(source.string());
  const auto start = std::chrono::steady_clock::now();
  const ChildResult out = run_nvcc_process(argv);
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.log = out.output;
  if (out.status == 127 && out.output.empty())
    throw LibraryNotFoundError("nvcc (" + nvcc + ") could not be run", "nvcc");
  if (out.status != 0)
    throw_compile_error(r, result.log, result.options, "nvcc " + result.compiler_version);
  // The file nvcc read must be the text the cache key covers: an edit meanwhile is a
  // different source.
  if (compiles_in_place(r)) {
    const auto now = detail::read_file(r.source_path);
    if (!now || *now != r.source)
      throw UsageError(r.source_name + ": changed while it was compiled; run again");
  }
  auto image = detail::read_file(output);
  if (!image || image->empty())
    throw LibraryNotFoundError("nvcc (" + nvcc + ") exited 0 but wrote no " +
                                   std::string(to_string(result.output)) +
                                   ": not a working nvcc (check CUDATOOL_NVCC, CUDA_HOME)",
                               "nvcc");
  result.image = std::move(*image);
  if (r.keep_dir) {
    for (const auto& entry : fs::directory_iterator(dir))
      result.kept_files.push_back(entry.path().string());
    std::sort(result.kept_files.begin(), result.kept_files.end());
  }
  return result;
}

bool log_says(const std::string& log, std::initializer_list<const char*> needles) {
  for (const char* n : needles)
    if (log.find(n) != std::string::npos) return true;
  return false;
}

bool needs_rdc(const std::string& log) {
  return log_says(log, {"requires separate compilation mode",
                        "could not be processed as the required runtime APIs are not declared",
                        "Unresolved extern function", "unresolved extern function"});
}

bool nvrtc_rejects_host_code(const std::string& log) {
  return log_says(log, {"host functions are not allowed in JIT mode", "cannot open source file"});
}

CompileResult run_engine(const CompileRequest& r, Engine engine) {
  return engine == Engine::nvrtc ? compile_nvrtc(r) : compile_nvcc(r);
}

// The engine choice, then the retries that the choice's own scan cannot foresee: nvcc when
// NVRTC rejects host code it did not see, -rdc when device-side launches need it. With
// --compiler the request is taken as it is: no retry (the hints say what to change).
CompileResult compile_chosen(const CompileRequest& request, const IncludeScan& scan) {
  EngineChoice choice = choose_engine_from(request, scan);
  CompileRequest r = request;
  std::string added;
  for (int attempt = 0;; ++attempt) {
    try {
      CompileResult result = run_engine(r, choice.engine);
      result.engine_reason = choice.reason + added;
      return result;
    } catch (const CompileError& e) {
      if (attempt >= 2) throw;
      if (!request.engine && choice.engine == Engine::nvrtc && nvrtc_rejects_host_code(e.log())) {
        try {
          find_nvcc();
        } catch (const LibraryNotFoundError&) {
          throw e;
        }
        choice = {Engine::nvcc, "host code: NVRTC rejected the file"};
        continue;
      }
      if (!request.engine && !r.rdc && needs_rdc(e.log())) {
        r.rdc = true;
        added = "; -rdc added: the file needs relocatable device code";
        continue;
      }
      throw;
    }
  }
}

struct Memo {
  std::mutex mutex;
  std::map<std::string, Compiled> results;
};

Memo& memo() {
  static Memo m;
  return m;
}

std::string identity_or_absent(Engine engine) {
  try {
    return file_identity(engine == Engine::nvrtc ? nvrtc_library_file() : find_nvcc());
  } catch (const LibraryNotFoundError&) {
    return "absent";
  }
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

}  // namespace

namespace detail {

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

}  // namespace detail

namespace {

std::optional<Compiled> deserialize(std::string_view payload) {
  std::vector<std::string> fields;
  auto result = detail::decode_cache_payload(payload, &fields);
  if (!result) return std::nullopt;
  Compiled c{std::move(*result), {}};
  for (std::size_t i = 0; i + 3 < fields.size(); i += 4) {
    Dependency d;
    d.path = fields[i];
    d.size = std::stoull(fields[i + 1]);
    d.mtime_ns = std::stoll(fields[i + 2]);
    d.sha256 = fields[i + 3];
    c.deps.push_back(std::move(d));
  }
  for (const auto& d : c.deps) c.result.includes.push_back(d.path);
  return c;
}

}  // namespace

std::string_view to_string(Engine e) {
  return e == Engine::nvrtc ? "nvrtc" : "nvcc";
}
std::string_view to_string(OutputKind k) {
  return k == OutputKind::cubin ? "cubin" : "ptx";
}

void check_supported(const Arch& arch, std::string_view source) {
  if (arch.number() < 75)
    throw UsageError(std::string(source) + " " + arch.str() + ": compute capability " +
                     arch.cc.str() + " is not supported by CUDA 13 (the oldest target is sm_75)");
}

std::string default_flags_variable(Engine engine) {
  return engine == Engine::nvrtc ? "CUDATOOL_DEFAULT_NVRTC_FLAGS" : "CUDATOOL_DEFAULT_NVCC_FLAGS";
}

std::vector<std::string> default_flags_from_environment(Engine engine) {
  std::vector<std::string> flags;
  const char* value = std::getenv(default_flags_variable(engine).c_str());
  if (value == nullptr) return flags;
  std::stringstream words(value);
  std::string word;
  while (words >> word) flags.push_back(word);
  return flags;
}

std::vector<std::string> toolkit_include_dirs() {
  std::vector<fs::path> roots;
  if (const std::string library = nvrtc::locate_library(); !library.empty())
    roots.push_back(fs::path(library).parent_path().parent_path());
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(env); root && *root) roots.emplace_back(root);
  roots.emplace_back("/usr/local/cuda");
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::is_regular_file(root / "include" / "cuda_runtime.h", ec) &&
        !fs::is_directory(root / "include" / "cooperative_groups", ec))
      continue;
    std::vector<std::string> dirs{(root / "include").string()};
    if (fs::is_directory(root / "include" / "cccl", ec))
      dirs.push_back((root / "include" / "cccl").string());
    return dirs;
  }
  return {};
}

std::vector<std::string> build_options(const CompileRequest& r, Engine engine) {
  const bool nvrtc = engine == Engine::nvrtc;
  std::vector<std::string> options = nvrtc ? r.nvrtc_options : r.nvcc_options;
  options.insert(options.end(), r.extra_options.begin(), r.extra_options.end());
  const Arch target = target_of(r);
  if (nvrtc) {
    options.push_back("--gpu-architecture=" + target.str());
  } else {
    options.push_back(output_of(r) == OutputKind::cubin ? "-cubin" : "-ptx");
    options.push_back("-arch=" + target.str());
  }
  if (r.rdc) options.push_back("-rdc=true");
  if (r.device_debug) options.push_back("-G");
  if (r.lineinfo) options.push_back("-lineinfo");
  if (r.fast_math) options.push_back("--use_fast_math");
  for (const auto& o : r.ptxas_options) options.push_back("--ptxas-options=" + o);
  if (!r.std.empty()) options.push_back((nvrtc ? "--std=" : "-std=") + r.std);
  if (r.maxrregcount > 0) options.push_back("--maxrregcount=" + std::to_string(r.maxrregcount));
  for (const auto& d : r.defines) options.push_back("-D" + d);
  // The source's own directory comes first for "..." includes, as nvcc and gcc search the
  // including file's directory before any -I. nvcc compiling the file where it is does that
  // by itself; NVRTC (no file to look beside) and nvcc on a copy get it as the first -I.
  if (nvrtc || !compiles_in_place(r))
    options.push_back("-I" + (r.source_dir.empty() ? std::string(".") : r.source_dir.string()));
  for (const auto& dir : r.include_dirs) options.push_back("-I" + dir);
  // CUDA's own headers, which nvcc finds by itself.
  if (nvrtc)
    for (const auto& dir : toolkit_include_dirs()) options.push_back("-I" + dir);
  return options;
}

EngineChoice choose_engine(const CompileRequest& request) {
  return choose_engine_from(request, scan_includes(request));
}

std::vector<std::string> build_options(const CompileRequest& request) {
  return build_options(request, choose_engine(request).engine);
}

std::vector<std::string> compile_hints(const std::string& log, const CompileRequest& r,
                                       Engine engine) {
  std::vector<std::string> hints;
  if (engine == Engine::nvrtc) {
    const std::string marker = "cannot open source file \"";
    if (const auto pos = log.find(marker); pos != std::string::npos) {
      const auto start = pos + marker.size();
      const std::string name = log.substr(start, log.find('"', start) - start);
      hints.push_back("hint: NVRTC cannot open <" + name +
                      ">, a host header: compile with --compiler nvcc (or without --compiler, "
                      "which picks nvcc for host code), or add its directory with -I");
    }
    if (log.find("host functions are not allowed in JIT mode") != std::string::npos)
      hints.push_back(
          "hint: NVRTC compiles device code only and this file has host functions: use "
          "--compiler nvcc (or drop --compiler), or -Xnvrtc -default-device to compile "
          "unannotated functions as __device__");
  } else if (const auto pos = log.find("cannot open source file \""); pos != std::string::npos) {
    hints.push_back(
        "hint: a header is not on the include path: add its directory with -I, or "
        "take the project's flags with -p BUILD_DIR");
  } else if (log.find(": fatal error: ") != std::string::npos &&
             log.find("No such file or directory") != std::string::npos) {
    hints.push_back(
        "hint: a header is not on the include path: add its directory with -I, or "
        "take the project's flags with -p BUILD_DIR");
  }
  if (log.find("may not have extern \"C\" linkage") != std::string::npos)
    hints.push_back(
        r.extern_c ? "hint: the extern \"C\" { } wrap (--extern-c, the default for stdin) "
                     "cannot hold C++ templates or headers: add --no-extern-c"
                   : "hint: an extern \"C\" block of the source holds C++ templates or headers: "
                     "include C++ headers before it, and mark only the kernels extern \"C\"");
  if (!r.rdc && needs_rdc(log))
    hints.push_back(
        "hint: device-side kernel launches and extern __device__ functions need relocatable "
        "device code: add -rdc");
  return hints;
}

std::string prepared_source(const CompileRequest& r) {
  std::string text;
  if (r.extern_c) text += "extern \"C\" {\n";
  text += "#line 1 \"" + line_directive_name(r.source_name) + "\"\n";
  text += r.source;
  if (!r.source.empty() && r.source.back() != '\n') text += '\n';
  if (r.extern_c) text += "}\n";
  return text;
}

std::vector<fs::path> find_includes(const CompileRequest& request) {
  return scan_includes(request).found;
}

std::string cache_key(const CompileRequest& r) {
  Sha256 h;
  h.field("cudatool-compile-2");
  h.field(r.engine ? to_string(*r.engine) : "auto");
  const std::string nvrtc_id = r.engine != Engine::nvcc ? identity_or_absent(Engine::nvrtc) : "";
  const std::string nvcc_id = r.engine != Engine::nvrtc ? identity_or_absent(Engine::nvcc) : "";
  h.field(nvrtc_id);
  h.field(nvcc_id);
  // Without the engine the request needs, say what to install (LibraryNotFoundError).
  if (r.engine == Engine::nvrtc && nvrtc_id == "absent") nvrtc::api();
  if (r.engine == Engine::nvcc && nvcc_id == "absent") find_nvcc();
  if (!r.engine && nvrtc_id == "absent" && nvcc_id == "absent") nvrtc::api();
  for (const auto& dir : toolkit_include_dirs()) h.field("toolkit:" + dir);
  h.field(r.arch.str());
  h.field(to_string(output_of(r)));
  auto list = [&](std::string_view label, const std::vector<std::string>& values) {
    h.field(label);
    h.field(std::to_string(values.size()));
    for (const auto& v : values) h.field(v);
  };
  list("extra", r.extra_options);
  list("nvrtc", r.nvrtc_options);
  list("nvcc", r.nvcc_options);
  list("ptxas", r.ptxas_options);
  list("defines", r.defines);
  list("include_dirs", r.include_dirs);
  h.field(std::string("flags:") + (r.rdc ? "r" : "-") + (r.device_debug ? "G" : "-") +
          (r.lineinfo ? "l" : "-") + (r.fast_math ? "f" : "-") + (r.extern_c ? "C" : "-"));
  h.field("std:" + r.std);
  h.field("maxrregcount:" + std::to_string(r.maxrregcount));
  h.field("source_dir:" + r.source_dir.string());
  // nvcc's names for internal-linkage kernels come from the file's real path.
  std::error_code ec;
  const fs::path real =
      r.source_path.empty() ? fs::path() : fs::weakly_canonical(r.source_path, ec);
  h.field("source_path:" + r.source_path.string() + "|" + real.string());
  h.field(r.source_name);
  h.field(r.source);
  return h.hex_digest();
}

CompileResult compile_uncached(const CompileRequest& request) {
  validate(request);
  const IncludeScan scan = scan_includes(request);
  CompileResult result = compile_chosen(request, scan);
  for (const auto& path : scan.found) result.includes.push_back(path.string());
  return result;
}

CompileResult compile(const CompileRequest& request, CompileCache* cache) {
  validate(request);
  const std::string key = cache_key(request);
  Memo& m = memo();
  if (!request.keep_dir) {
    std::lock_guard lock(m.mutex);
    if (auto it = m.results.find(key);
        it != m.results.end() && dependencies_hold(it->second.deps)) {
      CompileResult hit = it->second.result;
      hit.memo_hit = true;
      return hit;
    }
  }
  std::optional<CompileResult> result;
  std::vector<Dependency> deps;
  const bool use_cache = cache != nullptr && cache->enabled() && !request.keep_dir;
  if (use_cache) {
    if (auto payload = cache->load(key)) {
      auto cached = deserialize(*payload);
      if (!cached || !valid_image(cached->result)) {
        cache->remove(key);  // damaged: recompiled below, silently
      } else if (dependencies_hold(cached->deps)) {
        result = std::move(cached->result);
        deps = std::move(cached->deps);
        result->cache_hit = true;
        result->cache_path = cache->entry_path(key).string();
      }
    }
  }
  if (!result) {
    const IncludeScan scan = scan_includes(request);
    deps = record_dependencies(scan.found);  // before compiling: a change meanwhile is a miss
    result = compile_chosen(request, scan);
    for (const auto& d : deps) result->includes.push_back(d.path);
    if (cache != nullptr && cache->enabled() && cache->store(key, serialize({*result, deps})))
      result->cache_path = cache->entry_path(key).string();
  }
  result->cache_key = key;
  std::lock_guard lock(m.mutex);
  m.results[key] = Compiled{*result, deps};
  return *result;
}

void clear_compile_memo() {
  std::lock_guard lock(memo().mutex);
  memo().results.clear();
}

std::size_t compile_memo_size() {
  std::lock_guard lock(memo().mutex);
  return memo().results.size();
}

}  // namespace cudatool
