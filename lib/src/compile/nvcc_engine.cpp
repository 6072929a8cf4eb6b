// The nvcc engine: nvcc found (CUDATOOL_NVCC, CUDA_HOME, CUDA_PATH, /usr/local/cuda, PATH),
// its version asked once, and run on the file where it is or on a copy in a private
// temporary directory (process.hpp runs it).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "compile/engines.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/compile/process.hpp"

namespace cudatool::detail {
namespace fs = std::filesystem;
namespace {

bool executable(const fs::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

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

namespace {

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

fs::path make_temporary_dir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp && *tmp ? tmp : "/tmp";
  std::string pattern = base + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw UsageError(std::string(tmp && *tmp ? "TMPDIR=" : "") + base +
                     ": cannot create a temporary directory there: " + std::strerror(errno));
  return pattern;
}

}  // namespace

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
    write_intermediate(source, prepared_source(r));
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
      throw InputError(r.source_name + ": changed while it was compiled; run again");
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

}  // namespace cudatool::detail
