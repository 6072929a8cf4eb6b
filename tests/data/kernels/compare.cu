// A small project built twice (-DNEW_BUILD the second time, for one more architecture) for
// kernels --baseline's test (tests/apps/test_cli_kernels_compare.py).
__global__ void steady(float* a) { a[threadIdx.x] += 1.f; }

// NEW_BUILD: six times the values live at once (more registers).
__global__ void growing(const float* in, float* out, int n) {
#ifdef NEW_BUILD
  constexpr int kLive = 48;
#else
  constexpr int kLive = 8;
#endif
  float v[kLive];
#pragma unroll
  for (int i = 0; i < kLive; ++i) v[i] = in[i * n + threadIdx.x];
  float s = 0;
#pragma unroll
  for (int i = 0; i < kLive; ++i) s += v[i] * v[(i * 5 + 3) % kLive];
  out[threadIdx.x] = s;
}

// NEW_BUILD: at most 32 registers, so the 64 live values spill.
#ifdef NEW_BUILD
__global__ void __launch_bounds__(1024, 2) spilling(const float* in, float* out, int n) {
#else
__global__ void spilling(const float* in, float* out, int n) {
#endif
  float v[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) v[i] = in[i * n + threadIdx.x];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 64; ++i) s += v[i] * v[(i * 7) % 64];
  out[threadIdx.x] = s;
}

// NEW_BUILD: four times the static shared memory.
__global__ void sharing(float* a) {
#ifdef NEW_BUILD
  __shared__ float tile[4096];
#else
  __shared__ float tile[1024];
#endif
  for (int i = threadIdx.x; i < int(sizeof tile / sizeof tile[0]); i += blockDim.x) tile[i] = a[i];
  __syncthreads();
  a[threadIdx.x] = tile[(threadIdx.x * 7) % (sizeof tile / sizeof tile[0])];
}

#ifndef NEW_BUILD
__global__ void retired(int* a) { a[blockIdx.x] = blockIdx.x; }
#endif
