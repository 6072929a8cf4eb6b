// Relocatable device code: a parent kernel that launches children from the device, and a
// call to an extern __device__ function defined in another translation unit (linked with
// nvcc -rdc=true / nvlink). Needs -rdc; cudatool adds it when the file needs it.
#include <cuda_runtime.h>

extern __device__ float soft_threshold(float x, float t);

__global__ void refine_cell(float* cells, int first, int count, float t) {
  const int i = threadIdx.x;
  if (i < count) cells[first + i] = soft_threshold(cells[first + i], t);
}

__global__ void adaptive_refine(float* cells, const int* offsets, int regions, float t) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= regions) return;
  const int first = offsets[r], count = offsets[r + 1] - offsets[r];
  if (count > 64) {
    refine_cell<<<1, count>>>(cells, first, count, t);
  } else {
    for (int i = 0; i < count; ++i) cells[first + i] = soft_threshold(cells[first + i], t);
  }
}
