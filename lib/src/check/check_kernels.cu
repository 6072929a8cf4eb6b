// The kernels of `cudatool check`, compiled by nvcc at build time into a fatbin (machine
// code for the common architectures, PTX for the rest: lib/CMakeLists.txt) that is
// embedded in the binary and loaded through the driver, so no NVRTC is needed at run time.
// The pattern is integer arithmetic only, so the host recomputes it exactly
// (pattern() in lib/include/cudatool/check/check.hpp must stay the same function).

__device__ __forceinline__ unsigned cudatool_pattern(unsigned long long i, unsigned seed) {
  unsigned x = static_cast<unsigned>(i) * 2654435761u ^ static_cast<unsigned>(i >> 32) ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Writes the pattern over `out` with a grid-stride loop and marks, per block, the SM it ran
// on (sm_seen has room for 1024 SM ids). `fault_index` < n flips one bit of that element
// (test-only fault injection).
extern "C" __global__ void cudatool_check_fill(unsigned* out, unsigned long long n, unsigned seed,
                                               unsigned* sm_seen,
                                               unsigned long long fault_index) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride) {
    unsigned v = cudatool_pattern(i, seed);
    if (i == fault_index) v ^= 1u;
    out[i] = v;
  }
  if (threadIdx.x == 0 && sm_seen != nullptr) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (smid < 1024) sm_seen[smid] = 1;
  }
}

// Counts the elements of `data` that differ from the pattern into *mismatches.
extern "C" __global__ void cudatool_check_verify(const unsigned* data, unsigned long long n,
                                                 unsigned seed,
                                                 unsigned long long* mismatches) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += stride)
    local += data[i] != cudatool_pattern(i, seed);
  if (local) atomicAdd(mismatches, local);
}
