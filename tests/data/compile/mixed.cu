// Everything at once: static and dynamic shared memory, __constant__ data and launch
// bounds in one kernel.
__constant__ float weights[64];

extern "C" __global__ void __launch_bounds__(256) weighted_block(const float* in, float* out,
                                                                 int n) {
  __shared__ float staged[256];
  extern __shared__ float extra[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = i < n ? in[i] * weights[threadIdx.x & 63] : 0.0f;
  extra[threadIdx.x] = staged[threadIdx.x] * 2.0f;
  __syncthreads();
  if (i < n) out[i] = staged[255 - threadIdx.x] + extra[threadIdx.x ^ 1];
}
