// What an engine is given (its options, the prepared source, the names of intermediate
// files) and what both engines share (the intermediate files' writer, the compile failure).
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "compile/engines.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/compile/engine_choice.hpp"
#include "cudatool/compile/process.hpp"
#include "driver/nvrtc.hpp"

namespace cudatool {
namespace fs = std::filesystem;

namespace detail {
namespace {

std::string first_error_line(const std::string& log) {
  std::stringstream lines(log);
  std::string line;
  while (std::getline(lines, line))
    if (line.find("error") != std::string::npos) return line;
  return "";
}

}  // namespace

[[noreturn]] void throw_compile_error(const CompileRequest& r, const std::string& log,
                                      const std::vector<std::string>& options,
                                      const std::string& compiler) {
  std::string what =
      r.source_name + ": compilation failed (" + compiler + ", " + target_of(r).str() + ")";
  if (const std::string line = first_error_line(log); !line.empty()) what += ": " + line;
  throw CompileError(what, log, options, compiler);
}

OutputKind output_of(const CompileRequest& r) {
  return r.output.value_or(r.arch.real() ? OutputKind::cubin : OutputKind::ptx);
}

Arch target_of(const CompileRequest& r) {
  Arch arch = r.arch;
  if (output_of(r) == OutputKind::ptx) arch.code = Arch::Code::ptx;
  return arch;
}

bool compiles_in_place(const CompileRequest& r) {
  if (r.source_path.empty() || r.extern_c) return false;
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(r.source_path, ec), ec);
  return !nvcc_shell_hazard(r.source_path.string(), NvccQuoting::double_quoted) &&
         (ec || !nvcc_shell_hazard(real.string(), NvccQuoting::double_quoted));
}

std::string stem_of(const std::string& name) {
  std::string stem = fs::path(name).stem().string();
  for (char& c : stem)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  return stem.empty() || stem[0] == '.' ? "kernel" + stem : stem;
}

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

void write_intermediate(const fs::path& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) throw UsageError("cannot write " + path.string() + ": " + std::strerror(errno));
  int error = write_all(fd, data);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(path.c_str());
    throw UsageError("cannot write " + path.string() + ": " + std::strerror(error));
  }
}

}  // namespace detail

using detail::compiles_in_place;
using detail::output_of;
using detail::target_of;

std::vector<std::string> toolkit_include_dirs() {
  std::vector<fs::path> roots;
  if (const std::string library = driver::nvrtc::locate_library(); !library.empty())
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

std::vector<std::string> build_options(const CompileRequest& request) {
  return build_options(request, choose_engine(request).engine);
}

std::string prepared_source(const CompileRequest& r) {
  std::string text;
  if (r.extern_c) text += "extern \"C\" {\n";
  text += "#line 1 \"" + detail::line_directive_name(r.source_name) + "\"\n";
  text += r.source;
  if (!r.source.empty() && r.source.back() != '\n') text += '\n';
  if (r.extern_c) text += "}\n";
  return text;
}

}  // namespace cudatool
