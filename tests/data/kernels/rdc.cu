// Relocatable device code for `cudatool kernels`' tests (tests/CMakeLists.txt builds it -dc
// and device-links it with launcher.cu into a shared library and an executable): static
// shared memory in the window, none, dynamic only, 32 KiB of it (a SHT_CUDA_SHARED section
// larger than the object's data), a stack nvlink cannot size (recursion), a static kernel
// (its __nv_static_ name) and a kernel that launcher.cu launches from the device.
__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__global__ void with_shared(float* p) {
  __shared__ float s[300];
  s[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = s[299 - threadIdx.x];
}

__global__ void no_shared(float* p) { p[threadIdx.x] *= 2; }

__global__ void dynamic_shared(float* p) {
  extern __shared__ float d[];
  d[threadIdx.x] = p[0];
  __syncthreads();
  p[threadIdx.x] = d[threadIdx.x + 1];
}

__global__ void big_shared(float* p) {
  __shared__ float s[8192];
  s[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = s[8191 - threadIdx.x];
}

__global__ void recursive(int* p) { p[0] = fib(p[1]); }

static __global__ void static_kernel(int* p) { p[0] = 1; }

__global__ void launched(int* p) { p[threadIdx.x] += 1; }

// Launched from host code, so that the device link keeps every kernel.
void launch_all(int* p, float* f) {
  with_shared<<<1, 32>>>(f);
  no_shared<<<1, 32>>>(f);
  dynamic_shared<<<1, 32, 256>>>(f);
  big_shared<<<1, 32>>>(f);
  recursive<<<1, 1>>>(p);
  static_kernel<<<1, 1>>>(p);
}
