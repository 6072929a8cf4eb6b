#include "compile_json.hpp"

namespace cudatool::app {

JsonObject resources_object(const KernelResources& k) {
  JsonObject j;
  j.set("name", k.name)
      .set("demangled", k.demangled)
      .set("num_regs", k.num_regs)
      .set("shared_size_bytes", k.shared_size_bytes)
      .set("local_size_bytes", k.local_size_bytes)
      .set("const_size_bytes", k.const_size_bytes)
      .set("max_threads_per_block", k.max_threads_per_block)
      .set("num_barriers", k.num_barriers)
      .set("stack_unknown", k.stack_unknown);
  return j;
}

JsonObject compile_result_object(const CompileResult& r) {
  JsonObject j;
  j.set("arch", r.arch.str())
      .set("output", to_string(r.output))
      .set("size_bytes", r.image.size())
      .set("engine", r.compiler)
      .set("engine_reason", r.engine_reason)
      .set("compiler_version", r.compiler_version)
      .set("options", r.options)
      .set("log", r.log)
      .set("memo_hit", r.memo_hit)
      .set("compile_seconds", r.compile_seconds)
      .set("includes", r.includes);
  if (!r.kept_files.empty()) j.set("kept_files", r.kept_files);
  return j;
}

JsonObject cache_stats_object(const CacheStats& s) {
  JsonObject j;
  j.set("dir", s.dir).set("entries", s.entries).set("bytes", s.bytes).set("max_bytes", s.max_bytes);
  return j;
}

void write_json(JsonStream& out, const ResourceDifference& d) {
  out.value(JsonObject()
                .set("kernel", d.kernel)
                .set("attribute", d.attribute)
                .set("offline", d.offline)
                .set("loaded", d.loaded));
}

}  // namespace cudatool::app
