#include "compile_json.hpp"

namespace cudatool {

void to_json(nlohmann::json& j, const KernelResources& k) {
  j = nlohmann::json{{"name", k.name},
                     {"demangled", k.demangled},
                     {"num_regs", k.num_regs},
                     {"shared_size_bytes", k.shared_size_bytes},
                     {"local_size_bytes", k.local_size_bytes},
                     {"const_size_bytes", k.const_size_bytes},
                     {"max_threads_per_block", k.max_threads_per_block},
                     {"num_barriers", k.num_barriers},
                     {"stack_unknown", k.stack_unknown}};
}

void to_json(nlohmann::json& j, const CompileResult& r) {
  j = nlohmann::json{{"arch", r.arch.str()},
                     {"output", to_string(r.output)},
                     {"size_bytes", r.image.size()},
                     {"engine", r.compiler},
                     {"engine_reason", r.engine_reason},
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

void to_json(nlohmann::json& j, const CacheStats& s) {
  j = nlohmann::json{
      {"dir", s.dir}, {"entries", s.entries}, {"bytes", s.bytes}, {"max_bytes", s.max_bytes}};
}

void to_json(nlohmann::json& j, const ResourceDifference& d) {
  j = nlohmann::json{{"kernel", d.kernel},
                     {"attribute", d.attribute},
                     {"offline", d.offline},
                     {"loaded", d.loaded}};
}

}  // namespace cudatool
