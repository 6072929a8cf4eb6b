// Local memory: an array indexed by run-time values cannot live in registers, so it gets
// a stack frame (local_size_bytes > 0).
extern "C" __global__ void gather_local(const int* idx, const float* in, float* out, int n) {
  float scratch[96];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 96; ++k) scratch[k] = in[(i + k) % n];
  float acc = 0.0f;
  for (int k = 0; k < 8; ++k) acc += scratch[idx[(i * 8 + k) % n] % 96];
  out[i % n] = acc;
}
