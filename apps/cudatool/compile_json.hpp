// The JSON of a compile's structs (compile --json, kernels' resources, the Python module):
// the library returns plain structs and formats nothing (lib/README.md). In namespace
// cudatool so that nlohmann finds them by argument-dependent lookup.
#pragma once

#include <nlohmann/json.hpp>

#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/module.hpp"

namespace cudatool {

void to_json(nlohmann::json& j, const KernelResources& k);
void to_json(nlohmann::json& j, const CompileResult& r);
void to_json(nlohmann::json& j, const CacheStats& s);
void to_json(nlohmann::json& j, const ResourceDifference& d);

}  // namespace cudatool
