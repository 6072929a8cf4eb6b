// A kernel that needs more registers than --maxrregcount allows spills to local memory
// (the tests compile this one with --maxrregcount 32).
extern "C" __global__ void pressure(const float* in, float* out, int n) {
  float v[40];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < 40; ++k) v[k] = in[(i * 40 + k) % n];
  float acc = 0.0f;
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int k = 0; k < 40; ++k) acc = fmaf(acc, v[k], v[(k * 7 + r) % 40]);
  out[i % n] = acc;
}
