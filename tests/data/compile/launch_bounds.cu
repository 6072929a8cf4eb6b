// __launch_bounds__: the block-size limit is in the CUBIN (EIATTR_MAX_THREADS).
extern "C" __global__ void __launch_bounds__(128, 4)
    bounded_128(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i] + 1.0f;
}

extern "C" __global__ void __launch_bounds__(96) bounded_96(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = sqrtf(fabsf(data[i]));
}
