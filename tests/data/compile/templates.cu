// Templates: C++ linkage, so the CUBIN has mangled names (compile with --no-extern-c).
template <typename T, int ITEMS>
__global__ void scale(T* data, T factor, int n) {
  const int base = (blockIdx.x * blockDim.x + threadIdx.x) * ITEMS;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if (base + k < n) data[base + k] *= factor;
}

template <typename T>
__global__ void tile_copy(const T* in, T* out, int n) {
  __shared__ T buffer[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  buffer[threadIdx.x % 256] = i < n ? in[i] : T(0);
  __syncthreads();
  if (i < n) out[i] = buffer[(threadIdx.x + 1) % 256];
}

template __global__ void scale<float, 4>(float*, float, int);
template __global__ void scale<double, 2>(double*, double, int);
template __global__ void tile_copy<float>(const float*, float*, int);
template __global__ void tile_copy<double>(const double*, double*, int);
