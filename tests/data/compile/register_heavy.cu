// Many live accumulators: a high register count, so the register file (not the device's
// 1024) limits the block size.
extern "C" __global__ void many_accumulators(const float4* in, float* out, int n) {
  float acc[64];
#pragma unroll
  for (int k = 0; k < 64; ++k) acc[k] = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const float4 v = in[i];
#pragma unroll
    for (int k = 0; k < 64; ++k) acc[k] = fmaf(acc[k], v.x + k, v.y * acc[(k + 1) & 63] + v.z - v.w);
  }
  float total = 0.0f;
#pragma unroll
  for (int k = 0; k < 64; ++k) total += acc[k] * (k + 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}
