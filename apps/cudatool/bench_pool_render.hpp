// The renderings of a bench-pool result (bench::Result, plain structs from the library): the
// text for people (bench_pool_text.cpp) and the --json document (bench_pool_json.cpp, schema
// share/schemas/bench-pool.schema.json).
#pragma once

#include "cudatool/bench/pool_benchmark.hpp"
#include "cudatool/memory/memory_pool.hpp"
#include "json_stream.hpp"

namespace cudatool::app {
void write_json(JsonStream& out, const PoolStatistics& statistics);
// The --json document without schema_version (print_json adds it).
JsonObject bench_pool_json(const bench::Result& result);
// The text, on stdout.
void print_bench_pool_text(const bench::Result& result);
}  // namespace cudatool::app
