// cudatool compile's output: the text and JSON of its targets, the hints on a failed
// compile (which name cudatool's flags; the library says only what went wrong), and the
// cache commands (--cache-stats, --cache-clear, --cache-trim).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "compile_command.hpp"
#include "compile_json.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/compile/engine_choice.hpp"
#include "kernel_occupancy_json.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

std::string hint_text(const CompileFailureCause& cause) {
  using Kind = CompileFailureCause::Kind;
  switch (cause.kind) {
    case Kind::nvrtc_missing_header:
      return "hint: NVRTC cannot open <" + cause.header +
             ">, a host header: compile with --compiler nvcc (or without --compiler, which picks "
             "nvcc for host code), or add its directory with -I";
    case Kind::nvrtc_host_functions:
      return "hint: NVRTC compiles device code only and this file has host functions: use "
             "--compiler nvcc (or drop --compiler), or -Xnvrtc -default-device to compile "
             "unannotated functions as __device__";
    case Kind::missing_header:
      return "hint: a header is not on the include path: add its directory with -I, or take "
             "the project's flags with -p BUILD_DIR";
    case Kind::extern_c_wrap:
      return "hint: the extern \"C\" { } wrap (--extern-c, the default for stdin) cannot hold "
             "C++ templates or headers: add --no-extern-c";
    case Kind::extern_c_block:
      return "hint: an extern \"C\" block of the source holds C++ templates or headers: include "
             "C++ headers before it, and mark only the kernels extern \"C\"";
    case Kind::needs_rdc:
      return "hint: device-side kernel launches and extern __device__ functions need "
             "relocatable device code: add -rdc";
  }
  return "";
}

std::string describe_kernel(const KernelResources& k) {
  return k.demangled == k.name ? k.name : k.demangled + " [" + k.name + "]";
}

JsonObject target_json(const CompileTarget& t, const CompileFlags& flags,
                       const CompileCache& cache) {
  JsonObject out = compile_result_object(t.result);
  out.set("source", t.request.source_name);
  if (flags.output) out.set("output_path", *flags.output);
  // One cache object for the result's cache key, hit and path.
  JsonObject cache_object;
  cache_object.set("enabled", cache.enabled())
      .set("dir", cache.config().dir.string())
      .set("hit", t.result.cache_hit)
      .set("key", t.result.cache_key);
  if (!t.result.cache_path.empty()) cache_object.set("path", t.result.cache_path);
  out.set("cache", cache_object);
  if (t.request.keep_dir) out.set("kept_dir", t.request.keep_dir->string());
  std::vector<JsonObject> list;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    JsonObject k = resources_object(t.kernels[i]);
    if (flags.threads) k.set("occupancy", t.occupancy[i]);
    if (flags.load) k.set("loaded", resources_object(t.loaded[i]));
    list.push_back(std::move(k));
  }
  out.set("kernels", list);
  if (flags.load) out.set("differences", t.differences);
  return out;
}

void print_kernel_table(const CompileTarget& t, const CompileFlags& flags) {
  std::size_t width = 6;
  for (const auto& k : t.kernels) width = std::max(width, describe_kernel(k).size());
  command_out() << pad("kernel", width) << "  num_regs  shared_size_bytes  local_size_bytes"
                << "  const_size_bytes  max_threads_per_block";
  if (flags.threads) command_out() << "  occupancy@" << *flags.threads;
  command_out() << '\n';
  auto column = [](long long v, std::size_t w) {
    std::string s = std::to_string(v);
    return std::string(w > s.size() ? w - s.size() : 0, ' ') + s;
  };
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    command_out() << pad(describe_kernel(k), width) << "  " << column(k.num_regs, 8) << "  "
                  << column(k.shared_size_bytes, 17) << "  " << column(k.local_size_bytes, 16)
                  << "  " << column(k.const_size_bytes, 16) << "  "
                  << column(k.max_threads_per_block, 21);
    if (flags.threads) {
      if (const auto& record = t.occupancy[i].record) {
        command_out() << "  " << static_cast<int>(record->occupancy * 100 + 0.5) << "% ("
                      << record->tb_per_mp << " blocks/SM, " << record->limited_by << ")";
        if (const auto& clusters = t.occupancy[i].clusters)
          command_out() << ", " << clusters->max_active_clusters << " clusters of "
                        << clusters->cluster.size() << " on the GPU";
      } else {
        command_out() << "  - (" << t.occupancy[i].reason << ")";
      }
    }
    command_out() << '\n';
  }
}

void print_target_text(const CompileTarget& t, const CompileFlags& flags) {
  const CompileResult& result = t.result;
  command_out() << t.request.source_name << " -> " << result.arch.str() << ' '
                << to_string(result.output) << ", " << result.image.size() << " bytes";
  if (flags.output) command_out() << " in " << *flags.output;
  command_out() << " (" << result.compiler << ' ' << result.compiler_version << ", "
                << (result.memo_hit    ? "memo hit"
                    : result.cache_hit ? "cache hit"
                                       : "compiled in " +
                                             std::to_string(static_cast<int>(
                                                 result.compile_seconds * 1000 + 0.5)) +
                                             " ms")
                << ")\n";
  command_out() << "engine: " << result.compiler << " (" << result.engine_reason << ")\n";
  if (!t.kernels.empty()) print_kernel_table(t, flags);
  if (flags.load) {
    if (t.differences.empty()) {
      command_out() << "loaded on device: all " << t.kernels.size()
                    << " kernels match the driver's attributes\n";
    }
    for (const auto& d : t.differences)
      command_out() << "MISMATCH " << d.kernel << ' ' << d.attribute << ": cubin " << d.offline
                    << ", driver " << d.loaded << '\n';
  }
}

}  // namespace

int run_cache_command(const CompileFlags& flags, const GlobalOptions& global) {
  const CacheConfig config = cache_config(flags, false);
  CompileCache cache(config);
  JsonObject out;
  if (flags.cache_clear) {
    const auto removed = cache.clear();
    out.set("removed_entries", removed);
    if (!global.json())
      command_out() << "removed " << removed << " entries from " << config.dir.string() << '\n';
  }
  if (flags.cache_trim) {
    const auto limit = parse_size(*flags.cache_trim, "--cache-trim");
    const auto removed = cache.trim(limit);
    out.set("trimmed_entries", removed);
    if (!global.json())
      command_out() << "trimmed " << removed << " entries (limit " << limit << " bytes)\n";
  }
  const CacheStats stats = cache.stats();
  out.set("cache",
          cache_stats_object(stats).set("enabled", cache_config(flags, flags.no_cache).enabled));
  if (global.json()) {
    print_json(out, kCompileSchemaVersion);
  } else if (flags.cache_stats || (!flags.cache_clear && !flags.cache_trim)) {
    command_out() << "cache " << stats.dir << ": " << stats.entries << " entries, " << stats.bytes
                  << " bytes (bound " << stats.max_bytes << " bytes)\n";
  }
  return 0;
}

void print_compile_failure(const CompileError& e, const CompileRequest& request) {
  if (!e.log().empty()) command_err() << e.log() << (e.log().back() == '\n' ? "" : "\n");
  const Engine engine = e.compiler_version().rfind("nvcc", 0) == 0 ? Engine::nvcc : Engine::nvrtc;
  // A hint names a header from the source: escaped as every message is (render.hpp).
  for (const auto& cause : diagnose_failure(e.log(), request, engine))
    command_err() << printable(hint_text(cause), kMaxMessageLine) << '\n';
  if (request.keep_dir) print_message("kept intermediate files in " + request.keep_dir->string());
}

void print_targets(const std::vector<CompileTarget>& targets, const CompileFlags& flags,
                   const CompileCache& cache, const GlobalOptions& global) {
  if (!global.json()) {
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (i > 0) command_out() << '\n';
      print_target_text(targets[i], flags);
    }
  } else {
    print_json(compile_json(targets, flags, cache), kCompileSchemaVersion);
  }
}

JsonObject compile_json(const std::vector<CompileTarget>& targets, const CompileFlags& flags,
                        const CompileCache& cache) {
  if (targets.size() == 1) return target_json(targets.front(), flags, cache);
  std::vector<JsonObject> list;
  for (const auto& t : targets) list.push_back(target_json(t, flags, cache));
  return JsonObject().set("source", targets.front().request.source_name).set("targets", list);
}

}  // namespace cudatool::app
