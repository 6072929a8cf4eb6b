#include "cudatool/compile/compiler.hpp"
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

#include "cudatool/base/error.hpp"
#include "cudatool/base/sha256.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/driver/nvrtc.hpp"

namespace cudatool {
namespace fs = std::filesystem;
namespace {

void write_text(const fs::path& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeError("cannot write " + path.string() + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw RuntimeError("cannot write " + path.string() + ": " + std::strerror(errno));
    }
    written += static_cast<std::size_t>(n);
  }
  ::close(fd);
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

struct ProcessOutput {
  int status = -1;
  std::string output;  // stdout and stderr together
};

ProcessOutput run_capture(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw RuntimeError("pipe failed");
  const pid_t pid = ::fork();
  if (pid < 0) throw RuntimeError("fork failed");
  if (pid == 0) {
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  ProcessOutput result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string nvcc_version(const std::string& nvcc) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(nvcc); it != known.end()) return it->second;
  const ProcessOutput out = run_capture({nvcc, "--version"});
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
  return r.output.value_or(r.arch.real ? OutputKind::cubin : OutputKind::ptx);
}

// The architecture the compiler is asked for: PTX alone needs no real target.
Arch target_of(const CompileRequest& r) {
  Arch arch = r.arch;
  if (output_of(r) == OutputKind::ptx) arch.real = false;
  return arch;
}

void validate(const CompileRequest& r) {
  if (blank(r.source)) throw UsageError(r.source_name + ": empty source");
  if (r.arch.cc == 0) throw UsageError("no target architecture given");
  if (output_of(r) == OutputKind::cubin && !r.arch.real)
    throw UsageError("a CUBIN needs a real architecture (sm_" + std::to_string(r.arch.cc) +
                     r.arch.suffix + "), not " + r.arch.str());
  if (r.maxrregcount < 0 || r.maxrregcount > 255)
    throw UsageError("--maxrregcount " + std::to_string(r.maxrregcount) + ": expected 1 to 255");
  if (!r.std.empty() && r.std != "c++17" && r.std != "c++20")
    throw UsageError("--std " + r.std + ": expected c++17 or c++20");
}

struct IncludeScan {
  std::vector<fs::path> found;
  std::vector<std::string> unresolved;
};

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

IncludeScan scan_includes(const CompileRequest& r) {
  IncludeScan scan;
  const fs::path source_dir = r.source_dir.empty() ? fs::path(".") : r.source_dir;
  std::set<std::string> seen;
  struct Pending {
    std::string text;
    fs::path dir;
    int depth;
  };
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
        if (auto text = detail::read_file(candidate))
          stack.push_back({std::move(*text), candidate.parent_path(), current.depth + 1});
        break;
      }
      if (!resolved && seen.insert("<unresolved>" + name).second) scan.unresolved.push_back(name);
    }
  }
  return scan;
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

std::string serialize(const CompileResult& r) {
  nlohmann::json meta = {{"compiler", r.compiler}, {"compiler_version", r.compiler_version},
                         {"log", r.log},           {"options", r.options},
                         {"arch", r.arch.str()},   {"output", to_string(r.output)}};
  const std::string text = meta.dump();
  return std::to_string(text.size()) + "\n" + text + r.image;
}

std::optional<CompileResult> deserialize(const std::string& payload) {
  const std::size_t newline = payload.find('\n');
  if (newline == std::string::npos || newline > 20) return std::nullopt;
  try {
    const std::size_t length = std::stoull(payload.substr(0, newline));
    if (payload.size() - newline - 1 < length) return std::nullopt;
    const auto meta = nlohmann::json::parse(payload.substr(newline + 1, length));
    CompileResult r;
    r.compiler = meta.at("compiler").get<std::string>();
    r.compiler_version = meta.at("compiler_version").get<std::string>();
    r.log = meta.at("log").get<std::string>();
    r.options = meta.at("options").get<std::vector<std::string>>();
    r.arch = Arch::parse(meta.at("arch").get<std::string>());
    r.output = meta.at("output").get<std::string>() == "ptx" ? OutputKind::ptx : OutputKind::cubin;
    r.image = payload.substr(newline + 1 + length);
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string stem_of(const std::string& name) {
  const std::string stem = fs::path(name).stem().string();
  return stem.empty() ? "kernel" : stem;
}

CompileResult compile_nvrtc(const CompileRequest& r) {
  const nvrtc::Api& api = nvrtc::api();
  const Arch target = target_of(r);
  const auto supported = nvrtc::supported_archs();
  if (std::find(supported.begin(), supported.end(), target.cc) == supported.end()) {
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
  result.options = build_options(r);
  const std::string source = prepared_source(r);
  nvrtc::Program program(source, r.source_name);
  const auto start = std::chrono::steady_clock::now();
  const bool ok = program.compile(result.options);
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.log = program.log();
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
    throw RuntimeError("NVRTC produced no " + std::string(to_string(result.output)) + " for " +
                       r.source_name);
  return result;
}

CompileResult compile_nvcc(const CompileRequest& r) {
  const std::string nvcc = find_nvcc();
  CompileResult result;
  result.arch = r.arch;
  result.output = output_of(r);
  result.compiler = "nvcc";
  result.compiler_version = nvcc_version(nvcc);
  result.options = build_options(r);
  fs::path dir;
  bool temporary = false;
  if (r.keep_dir) {
    dir = *r.keep_dir;
  } else {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/cudatool-nvcc-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw RuntimeError("cannot create a temporary directory: " +
                         std::string(std::strerror(errno)));
    dir = pattern;
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
  const fs::path source = dir / (stem + ".cu");
  const fs::path output = dir / (stem + (result.output == OutputKind::cubin ? ".cubin" : ".ptx"));
  write_text(source, prepared_source(r));
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
  const ProcessOutput out = run_capture(argv);
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.log = out.output;
  if (out.status != 0)
    throw_compile_error(r, result.log, result.options, "nvcc " + result.compiler_version);
  auto image = detail::read_file(output);
  if (!image || image->empty()) throw RuntimeError("nvcc produced no " + output.string());
  result.image = std::move(*image);
  if (r.keep_dir) {
    for (const auto& entry : fs::directory_iterator(dir))
      result.kept_files.push_back(entry.path().string());
    std::sort(result.kept_files.begin(), result.kept_files.end());
  }
  return result;
}

struct Memo {
  std::mutex mutex;
  std::map<std::string, CompileResult> results;
};

Memo& memo() {
  static Memo m;
  return m;
}

}  // namespace

std::string_view to_string(Engine e) {
  return e == Engine::nvrtc ? "nvrtc" : "nvcc";
}
std::string_view to_string(OutputKind k) {
  return k == OutputKind::cubin ? "cubin" : "ptx";
}

Arch Arch::parse(std::string_view text) {
  Arch arch;
  std::string_view rest;
  if (text.substr(0, 3) == "sm_") {
    rest = text.substr(3);
  } else if (text.substr(0, 8) == "compute_") {
    arch.real = false;
    rest = text.substr(8);
  }
  std::size_t digits = 0;
  while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
  const std::string_view suffix = rest.substr(digits);
  if (digits < 2 || digits > 3 || !(suffix.empty() || suffix == "a" || suffix == "f"))
    throw UsageError("--arch \"" + std::string(text) +
                     "\": expected sm_XX or compute_XX, e.g. sm_90 or compute_80");
  arch.cc = std::stoi(std::string(rest.substr(0, digits)));
  arch.suffix = std::string(suffix);
  if (arch.cc < 75)
    throw UsageError("--arch " + std::string(text) + ": compute capability " +
                     std::to_string(arch.cc / 10) + "." + std::to_string(arch.cc % 10) +
                     " is not supported by CUDA 13 (the oldest target is sm_75)");
  return arch;
}

void to_json(nlohmann::json& j, const CompileResult& r) {
  j = nlohmann::json{{"arch", r.arch.str()},
                     {"output", to_string(r.output)},
                     {"size_bytes", r.image.size()},
                     {"compiler", r.compiler},
                     {"compiler_version", r.compiler_version},
                     {"options", r.options},
                     {"log", r.log},
                     {"cache_key", r.cache_key},
                     {"cache_hit", r.cache_hit},
                     {"memo_hit", r.memo_hit},
                     {"compile_seconds", r.compile_seconds},
                     {"includes", r.includes}};
  if (!r.cache_path.empty()) j["cache_path"] = r.cache_path;
  if (!r.kept_files.empty()) j["kept_files"] = r.kept_files;
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

std::vector<std::string> build_options(const CompileRequest& r) {
  const bool nvrtc = r.engine == Engine::nvrtc;
  std::vector<std::string> options = r.extra_options;
  const Arch target = target_of(r);
  if (nvrtc) {
    options.push_back("--gpu-architecture=" + target.str());
  } else {
    options.push_back(output_of(r) == OutputKind::cubin ? "-cubin" : "-ptx");
    options.push_back("-arch=" + target.str());
  }
  if (!r.std.empty()) options.push_back((nvrtc ? "--std=" : "-std=") + r.std);
  if (r.maxrregcount > 0) options.push_back("--maxrregcount=" + std::to_string(r.maxrregcount));
  for (const auto& d : r.defines) options.push_back("-D" + d);
  for (const auto& dir : r.include_dirs) options.push_back("-I" + dir);
  // The source's directory, for "..." includes: nvcc looks there itself (the source is
  // copied elsewhere for nvcc, so both get it), NVRTC has no file to look beside.
  options.push_back("-I" + (r.source_dir.empty() ? std::string(".") : r.source_dir.string()));
  return options;
}

std::string prepared_source(const CompileRequest& r) {
  std::string name = r.source_name;
  std::string escaped;
  for (char c : name) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  std::string text;
  if (r.extern_c) text += "extern \"C\" {\n";
  text += "#line 1 \"" + escaped + "\"\n";
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
  h.field("cudatool-compile-1");
  h.field(to_string(r.engine));
  h.field(file_identity(r.engine == Engine::nvrtc ? nvrtc_library_file() : find_nvcc()));
  h.field(r.arch.str());
  h.field(to_string(output_of(r)));
  for (const auto& option : build_options(r)) h.field(option);
  h.field(r.source_name);
  h.field(prepared_source(r));
  const IncludeScan scan = scan_includes(r);
  for (const auto& path : scan.found) {
    h.field(path.string());
    h.field(detail::read_file(path).value_or("<unreadable>"));
  }
  for (const auto& name : scan.unresolved) h.field("unresolved:" + name);
  return h.hex_digest();
}

CompileResult compile_uncached(const CompileRequest& request) {
  validate(request);
  CompileResult result =
      request.engine == Engine::nvrtc ? compile_nvrtc(request) : compile_nvcc(request);
  for (const auto& path : find_includes(request)) result.includes.push_back(path.string());
  return result;
}

CompileResult compile(const CompileRequest& request, CompileCache* cache) {
  validate(request);
  const std::string key = cache_key(request);
  Memo& m = memo();
  {
    std::lock_guard lock(m.mutex);
    if (auto it = m.results.find(key); it != m.results.end() && !request.keep_dir) {
      CompileResult hit = it->second;
      hit.memo_hit = true;
      return hit;
    }
  }
  std::optional<CompileResult> result;
  const bool use_cache = cache != nullptr && cache->enabled() && !request.keep_dir;
  if (use_cache) {
    if (auto payload = cache->load(key)) {
      result = deserialize(*payload);
      if (result) {
        result->cache_hit = true;
        result->cache_path = cache->entry_path(key).string();
        for (const auto& path : find_includes(request)) result->includes.push_back(path.string());
      }
    }
  }
  if (!result) {
    result = compile_uncached(request);
    if (cache != nullptr && cache->enabled() && cache->store(key, serialize(*result)))
      result->cache_path = cache->entry_path(key).string();
  }
  result->cache_key = key;
  std::lock_guard lock(m.mutex);
  m.results[key] = *result;
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
