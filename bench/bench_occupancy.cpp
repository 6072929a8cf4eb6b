// Occupancy without a GPU: one OccupancyRecord (goal <= 100 ns), a full block-size sweep
// with its suggestion (goal <= 1 ms), the register and shared-memory sweeps, and a
// DeviceData from the architecture table. Results: bench/RESULTS.md, "## Occupancy".
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "cudatool/occupancy/cluster_occupancy.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"

namespace {

using cudatool::Arch;
using cudatool::DeviceData;
using cudatool::OccupancyRecord;

struct Config {
  int threads;
  std::size_t shared_mem;
  int registers;
};

// Varied inputs, so the benchmark measures the calculation, not one cached branch.
std::vector<Config> configs() {
  std::vector<Config> list;
  for (int threads : {64, 128, 256, 512, 1024})
    for (std::size_t smem :
         {std::size_t{0}, std::size_t{4096}, std::size_t{20000}, std::size_t{70000}})
      for (int regs : {16, 32, 37, 64, 128}) list.push_back({threads, smem, regs});
  return list;
}

void BM_OccupancyRecord(benchmark::State& state) {
  const DeviceData devdata(Arch::parse("sm_90", "--arch"));
  const std::vector<Config> inputs = configs();
  std::size_t i = 0;
  for (auto _ : state) {
    const Config& c = inputs[i++ % inputs.size()];
    OccupancyRecord record(devdata, c.threads, c.shared_mem, c.registers);
    benchmark::DoNotOptimize(record.tb_per_mp);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_OccupancyRecord);

// What `occupancy --sweep` computes: 32 records plus cuda_occupancy.h's block-size search.
// An offline cluster query (`occupancy --cluster`): the record it needs, then the clusters
// from the product's GPCs, the largest size and every size (goal: as fast as one record,
// side by side with BM_OccupancyRecord).
void BM_ClusterQuery(benchmark::State& state) {
  const DeviceData devdata(Arch::parse("sm_90", "--arch"));
  std::string reason;
  const cudatool::ClusterTopology* topology = cudatool::cluster_topology_for(devdata, reason);
  const std::vector<Config> inputs = configs();
  std::size_t i = 0;
  for (auto _ : state) {
    const Config& c = inputs[i % inputs.size()];
    const int size = static_cast<int>(i++ % 16) + 1;
    OccupancyRecord record(devdata, c.threads, c.shared_mem, c.registers);
    const auto clusters =
        cudatool::cluster_occupancy(*topology, record.tb_per_mp, {size, 1, 1}, true);
    benchmark::DoNotOptimize(clusters.max_active_clusters);
    benchmark::DoNotOptimize(
        cudatool::max_potential_cluster_size(*topology, record.tb_per_mp, true));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ClusterQuery);

// The clusters alone, from a per-SM figure already computed.
void BM_ClusterOccupancyOnly(benchmark::State& state) {
  const DeviceData devdata(Arch::parse("sm_90", "--arch"));
  std::string reason;
  const cudatool::ClusterTopology* topology = cudatool::cluster_topology_for(devdata, reason);
  int i = 0;
  for (auto _ : state) {
    const auto clusters = cudatool::cluster_occupancy(*topology, i % 33, {i % 16 + 1, 1, 1}, true);
    benchmark::DoNotOptimize(clusters.max_active_clusters);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ClusterOccupancyOnly);

void BM_FullBlockSizeSweep(benchmark::State& state) {
  const DeviceData devdata(Arch::parse("sm_90", "--arch"));
  const std::vector<int> sizes = cudatool::default_block_sizes(devdata);
  for (auto _ : state) {
    auto sweep = cudatool::sweep_block_sizes(devdata, sizes, 10240, 37);
    auto suggestion = cudatool::suggest_block_size(devdata, 10240, 37);
    benchmark::DoNotOptimize(sweep.records.data());
    benchmark::DoNotOptimize(suggestion.block_size);
  }
}
BENCHMARK(BM_FullBlockSizeSweep)->Unit(benchmark::kMicrosecond);

void BM_RegisterSweep(benchmark::State& state) {
  const DeviceData devdata(Arch::parse("sm_90", "--arch"));
  for (auto _ : state) {
    auto sweep = cudatool::sweep_registers(devdata, 256, 10240);
    auto steps = cudatool::sweep_steps(sweep);
    benchmark::DoNotOptimize(steps.data());
  }
}
BENCHMARK(BM_RegisterSweep)->Unit(benchmark::kMicrosecond);

void BM_SharedMemorySweep(benchmark::State& state) {
  const DeviceData devdata(Arch::parse("sm_90", "--arch"));
  for (auto _ : state) {
    auto sweep = cudatool::sweep_shared_memory(devdata, 256, 37);
    auto steps = cudatool::sweep_steps(sweep);
    benchmark::DoNotOptimize(steps.data());
  }
}
BENCHMARK(BM_SharedMemorySweep)->Unit(benchmark::kMicrosecond);

void BM_DeviceDataFromArchitecture(benchmark::State& state) {
  for (auto _ : state) {
    DeviceData devdata(Arch::parse("sm_90", "--arch"));
    benchmark::DoNotOptimize(devdata.properties().max_threads_per_block);
  }
}
BENCHMARK(BM_DeviceDataFromArchitecture);

}  // namespace
