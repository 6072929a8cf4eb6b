// The renderings of a bench-pool result (bench::Result, plain structs from the library): the
// text for people (bench_pool_text.cpp) and the --json document (bench_pool_json.cpp, schema
// share/schemas/bench-pool.schema.json). The to_json functions are in the structs'
// namespaces, where nlohmann finds them by argument-dependent lookup.
#pragma once

#include <nlohmann/json.hpp>

#include "cudatool/memory/memory_pool.hpp"
#include "cudatool/memory/pool_benchmark.hpp"

namespace cudatool {
void to_json(nlohmann::json& j, const PoolStatistics& statistics);
namespace bench {
// The --json document without schema_version (print_json adds it).
void to_json(nlohmann::json& j, const Result& result);
}  // namespace bench
}  // namespace cudatool

namespace cudatool::app {
// The text, on stdout.
void print_bench_pool_text(const bench::Result& result);
}  // namespace cudatool::app
