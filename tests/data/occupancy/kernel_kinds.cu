// One kernel of each kind that shapes its occupancy, for the test that compile, kernels and
// occupancy --kernel-from give the same answer (tests/apps/test_cli_kernel_occupancy.cpp).
extern "C" __global__ void __launch_bounds__(128) bounded(float* x) {
  x[blockIdx.x * blockDim.x + threadIdx.x] *= 2.0f;
}

// min-blocks: the compiler keeps registers low enough for 4 blocks of 256 threads per SM.
extern "C" __global__ void __launch_bounds__(256, 4) min_blocks(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += x[(i + k) % n] * x[(i * 7 + k) % n];
  x[i] = acc;
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
// EIATTR_REQNTID: blocks of exactly 64 threads (__block_size__ needs sm_90 or later).
extern "C" __global__ void __block_size__((64, 1, 1)) required64(float* x) {
  x[blockIdx.x * 64 + threadIdx.x] += 1.0f;
}

// EIATTR_CTA_PER_CLUSTER: clusters exist from sm_90.
extern "C" __global__ void __cluster_dims__(2, 1, 1) clustered(float* x) {
  x[blockIdx.x] += 1.0f;
}
#endif

// Local memory (a stack frame): an array indexed at run time.
extern "C" __global__ void spills(const int* idx, const float* in, float* out, int n) {
  float scratch[96];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 96; ++k) scratch[k] = in[(i + k) % n];
  float acc = 0.0f;
  for (int k = 0; k < 8; ++k) acc += scratch[idx[(i * 8 + k) % n] % 96];
  out[i % n] = acc;
}

// Static shared memory and a barrier.
extern "C" __global__ void tiled(float* x) {
  __shared__ float tile[4096];
  tile[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}
