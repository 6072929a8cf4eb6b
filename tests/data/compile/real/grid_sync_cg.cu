// Cooperative groups: a two-phase reduction over the whole grid with grid.sync(), and a
// warp-level reduction with tiled partitions. Device code only (launched with
// cudaLaunchCooperativeKernel by a host file elsewhere).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

__device__ float warp_sum(cg::thread_block_tile<32> warp, float v) {
  return cg::reduce(warp, v, cg::plus<float>());
}

__global__ void grid_sum(const float* in, float* partial, float* total, int n) {
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ float per_warp[32];
  float v = 0.0f;
  for (int i = grid.thread_rank(); i < n; i += grid.size()) v += in[i];
  v = warp_sum(warp, v);
  if (warp.thread_rank() == 0) per_warp[warp.meta_group_rank()] = v;
  block.sync();
  if (warp.meta_group_rank() == 0) {
    v = warp.thread_rank() < warp.meta_group_size() ? per_warp[warp.thread_rank()] : 0.0f;
    v = warp_sum(warp, v);
    if (warp.thread_rank() == 0) partial[blockIdx.x] = v;
  }
  grid.sync();
  if (grid.thread_rank() == 0) {
    float sum = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += partial[b];
    *total = sum;
  }
}

__global__ void coalesced_count(const int* flags, int* count, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && flags[i]) {
    cg::coalesced_group active = cg::coalesced_threads();
    if (active.thread_rank() == 0) atomicAdd(count, static_cast<int>(active.size()));
  }
}
