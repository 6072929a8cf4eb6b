// Several kernels in one file, each with a different resource profile.
extern "C" __global__ void fill(float* out, float value, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

extern "C" __global__ void histogram(const unsigned char* in, unsigned* bins, int n) {
  __shared__ unsigned local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[in[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

extern "C" __global__ void stencil(const float* in, float* out, int n) {
  __shared__ float halo[128 + 2];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int t = threadIdx.x + 1;
  halo[t] = i < n ? in[i] : 0.0f;
  if (threadIdx.x == 0) halo[0] = i > 0 ? in[i - 1] : 0.0f;
  if (threadIdx.x == blockDim.x - 1) halo[t + 1] = i + 1 < n ? in[i + 1] : 0.0f;
  __syncthreads();
  if (i < n) out[i] = 0.25f * halo[t - 1] + 0.5f * halo[t] + 0.25f * halo[t + 1];
}

extern "C" __global__ void dot_partial(const double* a, const double* b, double* out, int n) {
  extern __shared__ double sums[];
  double acc = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    acc += a[i] * b[i];
  sums[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int k = 0; k < blockDim.x; ++k) total += sums[k];
    out[blockIdx.x] = total;
  }
}
