/* The bare-driver floor for `cudatool devices` / `cudatool attrs`: cuInit, enumerate,
 * name, memory, and every attribute of every device, linked against libcuda directly.
 * Built by bench/devices.sh on the GPU machine (it needs the real driver to link). */
#include <cuda.h>
#include <stdio.h>

int main(void) {
  if (cuInit(0) != CUDA_SUCCESS) return 1;
  int count = 0;
  cuDeviceGetCount(&count);
  long long checksum = 0;
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    char name[256];
    size_t bytes = 0;
    cuDeviceGet(&dev, i);
    cuDeviceGetName(name, sizeof name, dev);
    cuDeviceTotalMem(&bytes, dev);
    for (int a = 1; a < CU_DEVICE_ATTRIBUTE_MAX; ++a) {
      int value = 0;
      if (cuDeviceGetAttribute(&value, (CUdevice_attribute)a, dev) == CUDA_SUCCESS) checksum += value;
    }
    printf("%d %s %zu\n", i, name, bytes);
  }
  return checksum == 0;
}
