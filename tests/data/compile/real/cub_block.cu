// CUB block primitives in a complete program: a block-wide sum and a block radix sort,
// launched from host code through a template.
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_store.cuh>

#include <cstdio>

template <int BlockThreads>
__global__ void block_sum(const int* in, int* out) {
  using Reduce = cub::BlockReduce<int, BlockThreads>;
  __shared__ typename Reduce::TempStorage storage;
  const int value = in[blockIdx.x * BlockThreads + threadIdx.x];
  const int sum = Reduce(storage).Sum(value);
  if (threadIdx.x == 0) out[blockIdx.x] = sum;
}

template <int BlockThreads, int ItemsPerThread>
__global__ void block_sort(unsigned* keys) {
  using Load = cub::BlockLoad<unsigned, BlockThreads, ItemsPerThread, cub::BLOCK_LOAD_TRANSPOSE>;
  using Store = cub::BlockStore<unsigned, BlockThreads, ItemsPerThread, cub::BLOCK_STORE_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<unsigned, BlockThreads, ItemsPerThread>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Store::TempStorage store;
    typename Sort::TempStorage sort;
  } storage;
  unsigned items[ItemsPerThread];
  unsigned* tile = keys + blockIdx.x * BlockThreads * ItemsPerThread;
  Load(storage.load).Load(tile, items);
  __syncthreads();
  Sort(storage.sort).Sort(items);
  __syncthreads();
  Store(storage.store).Store(tile, items);
}

int main() {
  int *in = nullptr, *out = nullptr;
  unsigned* keys = nullptr;
  cudaMalloc(&in, 256 * 64 * sizeof(int));
  cudaMalloc(&out, 64 * sizeof(int));
  cudaMalloc(&keys, 128 * 8 * 16 * sizeof(unsigned));
  block_sum<256><<<64, 256>>>(in, out);
  block_sort<128, 8><<<16, 128>>>(keys);
  std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  cudaFree(in);
  cudaFree(out);
  cudaFree(keys);
  return 0;
}
