// libcu++ in device code: cuda::std::array for a per-thread histogram, cuda::atomic_ref
// for the merge, numeric_limits and a span. Device code only.
#include <cuda/atomic>
#include <cuda/std/array>
#include <cuda/std/limits>
#include <cuda/std/span>

constexpr int kBins = 16;

__global__ void histogram16(const float* values, unsigned* bins, int n, float lo, float hi) {
  cuda::std::array<unsigned, kBins> local{};
  const float width = (hi - lo) / kBins;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const int bin = ::min(::max(static_cast<int>((values[i] - lo) / width), 0), kBins - 1);
    ++local[bin];
  }
  for (int b = 0; b < kBins; ++b) {
    if (local[b] == 0) continue;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> bin(bins[b]);
    bin.fetch_add(local[b], cuda::std::memory_order_relaxed);
  }
}

__global__ void running_min(const int* values, int* result, int n) {
  const cuda::std::span<const int> all(values, static_cast<cuda::std::size_t>(n));
  int best = cuda::std::numeric_limits<int>::max();
  for (cuda::std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < all.size();
       i += gridDim.x * blockDim.x)
    best = ::min(best, all[i]);
  cuda::atomic_ref<int, cuda::thread_scope_device> slot(*result);
  slot.fetch_min(best, cuda::std::memory_order_relaxed);
}
