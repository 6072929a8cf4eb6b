#include "compile_json.hpp"

namespace cudatool::app {

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
