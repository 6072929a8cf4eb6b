// The floor under `cudatool kernels` on a large library: decompressing every compressed
// machine-code entry and nothing else (no parsing, no output), on 1, 2 and all usable
// CPUs, each thread with its own Decompressor (libzstd/liblz4, one reused buffer), largest
// entries first, as the scan does. bench/kernels.sh runs it beside cudatool and cuobjdump,
// so that a ratio goal can be set against what decompression alone allows.
//
// Two floors: BM_DecompressEveryEntry reads every entry, as any reader that decompresses
// each one does; BM_DecompressEachDistinctEntry reads the entries whose compressed bytes
// repeat another's once, as `kernels` does (libcublasLt.so.13: 1,275 distinct of 5,832),
// the least decompression that gives every kernel.
//
//   CUDATOOL_BENCH_FILE   the library (default $CUDA_HOME/lib64/libcublasLt.so.13)
//
// Counters: entries, GB written, and cpu_s, the process's CPU seconds per iteration (every
// thread's; Google Benchmark's own CPU time is the main thread's only).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "binary/byte_reader.hpp"
#include "binary/fatbin.hpp"
#include "cudatool/base/mapped_file.hpp"
#include "cudatool/base/parallel.hpp"

namespace {

std::string library_path() {
  if (const char* file = std::getenv("CUDATOOL_BENCH_FILE")) return file;
  const char* cuda = std::getenv("CUDA_HOME");
  return std::string(cuda ? cuda : "/usr/local/cuda") + "/lib64/libcublasLt.so.13";
}

double process_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// The file and its compressed machine-code entries, found once (a single pass over the
// whole file finds the containers of every section), largest first.
struct Library {
  cudatool::MappedFile file;
  std::vector<cudatool::FatbinEntry> entries;
  std::uint64_t bytes_out = 0;
  std::vector<cudatool::FatbinEntry> distinct;  // one of each set of equal compressed bytes
  std::uint64_t distinct_bytes_out = 0;

  explicit Library(const std::string& path) : file(path) {
    const cudatool::ByteReader r(file.bytes(), path);
    for (auto& container : cudatool::find_fatbin_containers(r, 0, r.size()))
      for (auto& e : container.entries)
        if (e.kind == 2 && e.compression != cudatool::FatbinCompression::none) {
          bytes_out += e.decompressed_size;
          entries.push_back(std::move(e));
        }
    std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return a.payload.size() > b.payload.size();
    });
    // Equal bytes sort next to each other: by size, then by the bytes themselves.
    distinct = entries;
    const auto bytes_less = [](const cudatool::FatbinEntry& a, const cudatool::FatbinEntry& b) {
      if (a.payload.size() != b.payload.size()) return a.payload.size() > b.payload.size();
      return std::memcmp(a.payload.data(), b.payload.data(), a.payload.size()) < 0;
    };
    const auto same_bytes = [](const cudatool::FatbinEntry& a, const cudatool::FatbinEntry& b) {
      return std::equal(a.payload.begin(), a.payload.end(), b.payload.begin(), b.payload.end());
    };
    std::stable_sort(distinct.begin(), distinct.end(), bytes_less);
    distinct.erase(std::unique(distinct.begin(), distinct.end(), same_bytes), distinct.end());
    for (const auto& e : distinct) distinct_bytes_out += e.decompressed_size;
  }
};

const Library* library_or_skip(benchmark::State& state) {
  const std::string path = library_path();
  if (!std::filesystem::exists(path)) {
    state.SkipWithError((path + " not found (set CUDATOOL_BENCH_FILE)").c_str());
    return nullptr;
  }
  static const Library library(path);  // found once for every benchmark and thread count
  return &library;
}

void decompress_all(benchmark::State& state, const Library& library,
                    const std::vector<cudatool::FatbinEntry>& entries, std::uint64_t bytes_out) {
  const std::string& path = library.file.path();
  const auto threads = static_cast<unsigned>(state.range(0));
  double cpu = 0;
  for (auto _ : state) {
    const double start = process_cpu_seconds();
    std::vector<std::unique_ptr<cudatool::Decompressor>> decompressors(threads);
    cudatool::parallel_for(entries.size(), threads, [&](std::size_t i, unsigned worker) {
      if (!decompressors[worker])
        decompressors[worker] = std::make_unique<cudatool::Decompressor>();
      benchmark::DoNotOptimize(decompressors[worker]->contents(entries[i], path).data());
    });
    decompressors.clear();
    cpu += process_cpu_seconds() - start;
  }
  state.counters["entries"] = static_cast<double>(entries.size());
  state.counters["GB_out"] = static_cast<double>(bytes_out) / 1e9;
  state.counters["cpu_s"] = cpu / static_cast<double>(state.iterations());
}

void BM_DecompressEveryEntry(benchmark::State& state) {
  if (const Library* library = library_or_skip(state))
    decompress_all(state, *library, library->entries, library->bytes_out);
}

void BM_DecompressEachDistinctEntry(benchmark::State& state) {
  if (const Library* library = library_or_skip(state))
    decompress_all(state, *library, library->distinct, library->distinct_bytes_out);
}

void thread_counts(benchmark::internal::Benchmark* b) {
  const unsigned cpus = cudatool::usable_cpus();
  b->Arg(1);
  if (cpus >= 2) b->Arg(2);
  if (cpus > 2) b->Arg(cpus);
}

BENCHMARK(BM_DecompressEveryEntry)
    ->Apply(thread_counts)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);
BENCHMARK(BM_DecompressEachDistinctEntry)
    ->Apply(thread_counts)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

}  // namespace
