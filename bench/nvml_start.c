// NVML's own start on a GPU machine (bench/RESULTS.md, issue 24): dlopen, nvmlInitWithFlags(FLAGS),
// the first device handle (by PCI bus id where one is given, else index 0: NVML attaches the
// GPU there) and the MIG-mode query, each timed; a third argument ends the process with
// _exit, skipping NVML's and libcuda's exit-time work, to time the whole process both ways.
//   cc -O2 bench/nvml_start.c -o nvml_start -ldl && ./nvml_start 0 "$(nvidia-smi
//   --query-gpu=pci.bus_id --format=csv,noheader | head -1)"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
typedef int (*init_flags_t)(unsigned);
typedef int (*init_t)(void);
typedef int (*by_pci_t)(const char*, void**);
typedef int (*by_index_t)(unsigned, void**);
typedef int (*mig_t)(void*, unsigned*, unsigned*);
typedef int (*count_t)(unsigned*);
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
int main(int argc, char** argv) {
  unsigned flags = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
  const char* bus = argc > 2 ? argv[2] : NULL;
  double t0 = now();
  void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  double t1 = now();
  if (!h) {
    printf("no nvml\n");
    return 1;
  }
  init_flags_t initf = (init_flags_t)dlsym(h, "nvmlInitWithFlags");
  int r = initf(flags);
  double t2 = now();
  void* dev = NULL;
  int r2;
  if (bus) {
    by_pci_t f = (by_pci_t)dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
    r2 = f(bus, &dev);
  } else {
    by_index_t f = (by_index_t)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    r2 = f(0, &dev);
  }
  double t3 = now();
  unsigned cur = 9, pend = 9;
  mig_t m = (mig_t)dlsym(h, "nvmlDeviceGetMigMode");
  int r3 = m(dev, &cur, &pend);
  double t4 = now();
  unsigned n = 0;
  count_t c = (count_t)dlsym(h, "nvmlDeviceGetCount_v2");
  int r4 = c(&n);
  printf(
      "flags=%u dlopen %.2f ms, init %.2f ms (r=%d), handle %.2f ms (r=%d), mig %.2f ms (r=%d "
      "%u,%u), count r=%d n=%u, total %.2f ms\n",
      flags, t1 - t0, t2 - t1, r, t3 - t2, r2, t4 - t3, r3, cur, pend, r4, n, t4 - t0);
  if (argc > 3) {
    fflush(stdout);
    _exit(0);
  } /* skips NVML's and libcuda's exit-time work */
  return 0;
}
