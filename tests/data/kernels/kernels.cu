// The realistic program `cudatool kernels` is tested on (tests/CMakeLists.txt builds it with
// nvcc in every compression mode, for several architectures, as an object, a relocatable
// -dc object, an executable, a shared library and a static archive): templates, launch
// bounds, __maxnreg__, a required block size, __constant__ data, a kernel that spills, a
// cluster kernel, dynamic shared memory, a device function called across kernels.
#include <cstdio>

__constant__ float coeffs[64];

template <typename T, int N>
__global__ void __launch_bounds__(256, 2) scale(T* x, int n) {
  __shared__ T tile[N];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % N] = x[i % n];
  __syncthreads();
  if (i < n) x[i] = tile[(threadIdx.x + 1) % N] * static_cast<T>(coeffs[i % 64]);
}

__global__ void __maxnreg__(40) capped(float* x) {
  x[threadIdx.x] = sqrtf(x[threadIdx.x]) * coeffs[1];
}

// A local array indexed at run time: it lives in local memory (a stack frame).
extern "C" __global__ void spill(float* out, int k) {
  float a[256];
  for (int i = 0; i < 256; ++i) a[i] = out[(i * k) & 1023];
  float s = 0;
  for (int i = 0; i < 256; ++i) s += a[(i * 7 + k) & 255];
  out[threadIdx.x] = s;
}

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__global__ void __cluster_dims__(2, 1, 1) clustered(float* x) { x[blockIdx.x] += 1.0f; }
#endif

__global__ void __launch_bounds__(128) dynamic_shared(float* x) {
  extern __shared__ float s[];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = s[127 - threadIdx.x];
}

namespace physics {
struct Particle {
  float x, y, z, w;
};
template <int Unroll>
__global__ void step(Particle* p, int n, float dt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
  for (int u = 0; u < Unroll; ++u, i += gridDim.x * blockDim.x)
    if (i < n) p[i].x += p[i].w * dt;
}
template __global__ void step<1>(Particle*, int, float);
template __global__ void step<4>(Particle*, int, float);
}  // namespace physics

int main() {
  float* d = nullptr;
  scale<float, 128><<<1, 128>>>(d, 0);
  scale<double, 64><<<1, 64>>>(reinterpret_cast<double*>(d), 0);
  capped<<<1, 32>>>(d);
  spill<<<1, 1>>>(d, 3);
  dynamic_shared<<<1, 128, 512>>>(d);
  physics::step<4><<<1, 64>>>(nullptr, 0, 0.1f);
  std::printf("%d\n", static_cast<int>(cudaDeviceSynchronize()));
  return 0;
}
