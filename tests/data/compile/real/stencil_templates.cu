// Templates instantiated by host launches: a tiled 1-D stencil for two radii and two
// element types, a transpose with a padded shared tile, and a functor-driven map.
#include <cuda_runtime.h>

template <typename T, int Radius, int Tile>
__global__ void stencil_1d(const T* in, T* out, int n) {
  __shared__ T tile[Tile + 2 * Radius];
  const int g = blockIdx.x * Tile + threadIdx.x;
  const int l = threadIdx.x + Radius;
  tile[l] = g < n ? in[g] : T(0);
  if (threadIdx.x < Radius) {
    tile[l - Radius] = g >= Radius ? in[g - Radius] : T(0);
    tile[l + Tile] = g + Tile < n ? in[g + Tile] : T(0);
  }
  __syncthreads();
  T sum = T(0);
#pragma unroll
  for (int o = -Radius; o <= Radius; ++o) sum += tile[l + o];
  if (g < n) out[g] = sum / T(2 * Radius + 1);
}

template <int Dim>
__global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[Dim][Dim + 1];
  int x = blockIdx.x * Dim + threadIdx.x, y = blockIdx.y * Dim + threadIdx.y;
  if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  x = blockIdx.y * Dim + threadIdx.x;
  y = blockIdx.x * Dim + threadIdx.y;
  if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}

struct Saxpy {
  float a;
  __device__ float operator()(float x, float y) const { return a * x + y; }
};

template <typename F>
__global__ void map2(F f, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = f(x[i], y[i]);
}

void run(float* f, double* d, int n) {
  stencil_1d<float, 3, 256><<<(n + 255) / 256, 256>>>(f, f + n, n);
  stencil_1d<double, 7, 128><<<(n + 127) / 128, 128>>>(d, d + n, n);
  transpose<32><<<dim3(n / 32, n / 32), dim3(32, 32)>>>(f, f + n, n, n);
  map2<<<(n + 255) / 256, 256>>>(Saxpy{2.0f}, f, f + n, n);
}
