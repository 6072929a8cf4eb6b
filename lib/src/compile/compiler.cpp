// compile(): the request checked, the engine chosen and run (engines.hpp) with its retries,
// through the in-process memo and the on-disk cache (its key here, its payload in
// cache_payload.cpp).
#include "cudatool/compile/compiler.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>

#include "compile/engines.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/sha256.hpp"
#include "cudatool/compile/cache_payload.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/engine_choice.hpp"
#include "driver/nvrtc.hpp"

namespace cudatool {
namespace fs = std::filesystem;
using detail::output_of;
using detail::target_of;
namespace {

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
    throw InputError(r.source_name + ": byte " + hex + " at " + *where +
                     ": not a text source (the compiler would stop reading there)");
  }
  if (blank(r.source)) throw InputError(r.source_name + ": empty source");
  if (r.arch.number() == 0) throw UsageError("no target architecture given");
  if (output_of(r) == OutputKind::cubin && !r.arch.real()) {
    Arch real = r.arch;
    real.code = Arch::Code::sass;
    throw UsageError("a CUBIN needs a real architecture (" + real.str() + "), not " + r.arch.str());
  }
  if (r.maxrregcount < 0 || r.maxrregcount > 255)
    throw UsageError("maxrregcount " + std::to_string(r.maxrregcount) + ": expected 1 to 255");
  if (!r.std.empty() && r.std != "c++11" && r.std != "c++14" && r.std != "c++17" &&
      r.std != "c++20")
    throw UsageError(r.sources.std + " " + r.std + ": expected c++11, c++14, c++17 or c++20");
  if (r.engine == Engine::nvrtc && !r.nvcc_options.empty())
    throw UsageError(r.sources.nvcc_options + " " + r.nvcc_options.front() +
                     ": given, but the request's engine is NVRTC");
  if (r.engine == Engine::nvcc && !r.nvrtc_options.empty())
    throw UsageError("NVRTC options " + r.nvrtc_options.front() +
                     ": given, but the request's engine is nvcc");
}

// The engine choice, then the retries that the choice's own scan cannot foresee
// (engine_choice.hpp): nvcc when NVRTC rejects host code it did not see, -rdc when
// device-side launches need it. A request that names its engine is taken as it is.
CompileResult compile_chosen(const CompileRequest& request, const SourceScan& scan) {
  EngineChoice choice = choose_engine(request, scan);
  CompileRequest r = request;
  std::string added;
  for (int attempt = 0;; ++attempt) {
    try {
      CompileResult result =
          choice.engine == Engine::nvrtc ? detail::compile_nvrtc(r) : detail::compile_nvcc(r);
      result.engine_reason = choice.reason + added;
      return result;
    } catch (const CompileError& e) {
      if (attempt >= 2) throw;
      switch (retry_after_failure(r, choice.engine, e.log())) {
        case Retry::none:
          throw;
        case Retry::with_nvcc:
          try {
            detail::find_nvcc();
          } catch (const LibraryNotFoundError&) {
            throw e;
          }
          choice = {Engine::nvcc, "host code: NVRTC rejected the file"};
          continue;
        case Retry::with_rdc:
          r.rdc = true;
          added = "; -rdc added: the file needs relocatable device code";
          continue;
      }
    }
  }
}

struct Memo {
  std::mutex mutex;
  std::map<std::string, detail::CachedCompile> results;
};

Memo& memo() {
  static Memo m;
  return m;
}

std::string identity_or_absent(Engine engine) {
  try {
    return file_identity(engine == Engine::nvrtc ? detail::nvrtc_library_file()
                                                 : detail::find_nvcc());
  } catch (const LibraryNotFoundError&) {
    return "absent";
  }
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

std::string cache_key(const CompileRequest& r) {
  Sha256 h;
  h.field("cudatool-compile-3");
  h.field(r.engine ? to_string(*r.engine) : "auto");
  const std::string nvrtc_id = r.engine != Engine::nvcc ? identity_or_absent(Engine::nvrtc) : "";
  const std::string nvcc_id = r.engine != Engine::nvrtc ? identity_or_absent(Engine::nvcc) : "";
  h.field(nvrtc_id);
  h.field(nvcc_id);
  // Without the engine the request needs, say what to install (LibraryNotFoundError).
  if (r.engine == Engine::nvrtc && nvrtc_id == "absent") driver::nvrtc::api();
  if (r.engine == Engine::nvcc && nvcc_id == "absent") detail::find_nvcc();
  if (!r.engine && nvrtc_id == "absent" && nvcc_id == "absent") driver::nvrtc::api();
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
  const SourceScan scan = scan_source(request);
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
        it != m.results.end() && detail::dependencies_hold(it->second.dependencies)) {
      CompileResult hit = it->second.result;
      hit.memo_hit = true;
      return hit;
    }
  }
  std::optional<CompileResult> result;
  std::vector<detail::Dependency> deps;
  const bool use_cache = cache != nullptr && cache->enabled() && !request.keep_dir;
  if (use_cache) {
    if (auto payload = cache->load(key)) {
      auto cached = detail::decode_cache_payload(*payload);
      if (!cached || !detail::valid_image(cached->result)) {
        cache->remove(key);  // damaged: recompiled below, silently
      } else if (detail::dependencies_hold(cached->dependencies)) {
        result = std::move(cached->result);
        deps = std::move(cached->dependencies);
        result->cache_hit = true;
        result->cache_path = cache->entry_path(key).string();
      }
    }
  }
  bool complete = true;
  if (!result) {
    const SourceScan scan = scan_source(request);
    complete = scan.complete;
    // Before compiling: a change meanwhile is a miss.
    deps = detail::record_dependencies(scan.found, scan.checked);
    result = compile_chosen(request, scan);
    for (const auto& path : scan.found) result->includes.push_back(path.string());
    // An include the scan could not follow: what the compiler read is not known, so no
    // entry could say when it goes stale.
    if (complete && cache != nullptr && cache->enabled() &&
        cache->store(key, detail::encode_cache_payload({*result, deps})))
      result->cache_path = cache->entry_path(key).string();
  }
  result->cache_key = key;
  if (!complete) return *result;
  std::lock_guard lock(m.mutex);
  m.results[key] = detail::CachedCompile{*result, deps};
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
