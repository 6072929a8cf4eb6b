// Dynamic shared memory only: the static size is 0, the launch supplies the rest.
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
  extern __shared__ float partial[];
  const unsigned t = threadIdx.x;
  const unsigned i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}
