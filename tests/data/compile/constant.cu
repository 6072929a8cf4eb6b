// __constant__ data: 256 floats of filter taps and an 8-int lookup table, 1056 bytes.
__constant__ float taps[256];
__constant__ int lut[8];

extern "C" __global__ void fir(const float* in, float* out, int n, int ntaps) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < ntaps && k <= i; ++k) acc += taps[k] * in[i - k];
  out[i] = acc;
}

extern "C" __global__ void lookup(const int* in, int* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = lut[in[i] & 7];
}
