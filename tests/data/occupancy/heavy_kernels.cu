// Kernels for tests/lib/occupancy/test_occupancy_gpu.cpp: register-hungry (128 doubles live at once,
// more than 255 registers hold, so a register cap given to the JIT decides the count), each with a different amount of
// static shared memory. The test loads the PTX with CU_JIT_MAX_REGISTERS at many caps, so
// no compiler is needed on the GPU machine. Regenerate heavy_kernels.ptx with:
//
//   nvcc -ptx -arch=compute_75 -o heavy_kernels.ptx heavy_kernels.cu
//
// The bodies only have to keep their values alive; nothing runs them.

constexpr int kLiveValues = 128;

template <int kSharedBytes>
__device__ void heavy(const float* __restrict__ in, float* __restrict__ out, int n) {
  double v[kLiveValues];
#pragma unroll
  for (int i = 0; i < kLiveValues; ++i) v[i] = in[(threadIdx.x + i * 37) % n];
  // Every value feeds two others in each round, so all of them stay live together.
#pragma unroll
  for (int round = 0; round < 2; ++round) {
#pragma unroll
    for (int i = 0; i < kLiveValues; ++i)
      v[i] = fma(v[i], v[(i + 1 + round) % kLiveValues], v[(i * 7 + round) % kLiveValues]);
  }
  double total = 0.0;
#pragma unroll
  for (int i = 0; i < kLiveValues; ++i) total = fma(total, 0.5, v[i]);
  float sum = static_cast<float>(total);
  if constexpr (kSharedBytes > 0) {
    constexpr int kWords = kSharedBytes / static_cast<int>(sizeof(float));
    __shared__ float buffer[kWords];
    for (int i = threadIdx.x; i < kWords; i += blockDim.x) buffer[i] = sum * static_cast<float>(i);
    __syncthreads();
    sum += buffer[(threadIdx.x * 13) % kWords];
  } else {
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

#define CUDATOOL_HEAVY_KERNEL(bytes)                                                        \
  extern "C" __global__ void heavy_smem_##bytes(const float* in, float* out, int n) {       \
    heavy<bytes>(in, out, n);                                                               \
  }

CUDATOOL_HEAVY_KERNEL(0)
CUDATOOL_HEAVY_KERNEL(1024)
CUDATOOL_HEAVY_KERNEL(4096)
CUDATOOL_HEAVY_KERNEL(12288)
CUDATOOL_HEAVY_KERNEL(24576)
CUDATOOL_HEAVY_KERNEL(40960)
CUDATOOL_HEAVY_KERNEL(49152)
