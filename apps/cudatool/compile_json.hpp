// The JSON of a compile's structs (compile --json, occupancy's kernel, the Python module):
// the library returns plain structs and formats nothing (lib/README.md).
#pragma once

#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/module.hpp"
#include "json_stream.hpp"
#include "kernel_resources_json.hpp"

namespace cudatool::app {

// A compile's result without its cache members (key, hit, path: compile_render.cpp's cache
// object holds them).
JsonObject compile_result_object(const CompileResult& r);
JsonObject cache_stats_object(const CacheStats& s);
void write_json(JsonStream& out, const ResourceDifference& d);

}  // namespace cudatool::app
