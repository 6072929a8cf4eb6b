// record_clusters: the driver's own answers about thread-block clusters on the current GPU,
// as one JSON document on standard output (built by nvcc on a GPU machine; see
// tools/gpu-clusters.sh). For each of its kernels (several register counts, and kernels with
// compile-time __cluster_dims__) over block sizes 32..1024, dynamic shared memory 0..the
// opt-in limit and cluster sizes 1..16 (X,Y,Z shapes too): cuOccupancyMaxActiveClusters,
// cuOccupancyMaxActiveBlocksPerMultiprocessor and cuOccupancyMaxPotentialClusterSize; the
// device's attributes; and where the hardware placed each block of co-resident clusters
// (%smid), which groups the SMs into GPCs. tools/clusters_vs_driver compares the offline
// model with such a document; tests/data/clusters holds the documents measured.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#define CHECK_CU(x)                                                       \
  do {                                                                    \
    CUresult r_ = (x);                                                    \
    if (r_ != CUDA_SUCCESS) {                                             \
      const char* s_ = nullptr;                                           \
      cuGetErrorName(r_, &s_);                                            \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)
#define CHECK_RT(x)                                                                           \
  do {                                                                                        \
    cudaError_t r_ = (x);                                                                     \
    if (r_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(r_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// N values kept live across a loop whose trip count the compiler cannot know: about N
// registers per thread.
template <int N>
__global__ void live_values(float* out, const float* in, int rounds) {
  float v[N > 0 ? N : 1];
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = in[threadIdx.x + i * blockDim.x];
#pragma unroll 1
  for (int r = 0; r < rounds; ++r) {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = v[i] * v[(i + 1) % (N > 0 ? N : 1)] + 1.0f;
  }
  float s = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) s += v[i] * static_cast<float>(i + 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void __cluster_dims__(2, 1, 1) dims_2(float* out) {
  out[threadIdx.x] = 1;
}
__global__ void __cluster_dims__(4, 1, 1) dims_4(float* out) {
  out[threadIdx.x] = 1;
}
__global__ void __cluster_dims__(8, 1, 1) dims_8(float* out) {
  out[threadIdx.x] = 1;
}
__global__ void __cluster_dims__(2, 2, 1) dims_2x2(float* out) {
  out[threadIdx.x] = 1;
}
__global__ void __cluster_dims__(3, 1, 1) dims_3(float* out) {
  out[threadIdx.x] = 1;
}
__global__ void __cluster_dims__(16, 1, 1) dims_16(float* out) {
  out[threadIdx.x] = 1;
}
__global__ void __launch_bounds__(256, 2) __cluster_dims__(4, 1, 1) dims_4_lb(float* out) {
  __shared__ float tile[4096];
  tile[threadIdx.x] = out[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = tile[(threadIdx.x + 1) % 256];
}

// Where each block ran: its SM, and the cluster it belongs to; spins so that a grid of
// co-resident clusters is really co-resident.
__global__ void where(unsigned* sm_of_block, unsigned* cluster_of_block, long long spin_ns) {
  if (threadIdx.x != 0) return;
  unsigned smid, cid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
  sm_of_block[blockIdx.x] = smid;
  cluster_of_block[blockIdx.x] = cid;
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (static_cast<long long>(t - t0) < spin_ns);
}

struct Kernel {
  const char* name;
  const void* symbol;
  bool launch_cluster;  // cluster dims from the launch (not compiled in)
};

static int attr(CUdevice dev, CUdevice_attribute a) {
  int v = 0;
  CHECK_CU(cuDeviceGetAttribute(&v, a, dev));
  return v;
}
static int fattr(CUfunction f, CUfunction_attribute a) {
  int v = 0;
  CHECK_CU(cuFuncGetAttribute(&v, a, f));
  return v;
}

static int active_clusters(CUfunction f, int threads, int smem, int cx, int cy, int cz,
                           bool set_dims, int grid_mult = 1) {
  CUlaunchConfig config{};
  config.gridDimX = cx * grid_mult;
  config.gridDimY = cy;
  config.gridDimZ = cz;
  config.blockDimX = threads;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = smem;
  CUlaunchAttribute a[1];
  a[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  a[0].value.clusterDim.x = cx;
  a[0].value.clusterDim.y = cy;
  a[0].value.clusterDim.z = cz;
  config.attrs = set_dims ? a : nullptr;
  config.numAttrs = set_dims ? 1 : 0;
  int n = 0;
  CUresult r = cuOccupancyMaxActiveClusters(&n, f, &config);
  return r == CUDA_SUCCESS ? n : -static_cast<int>(r);
}

static int potential_size(CUfunction f, int threads, int smem) {
  CUlaunchConfig config{};
  config.gridDimX = 48;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = smem;
  int n = 0;
  CUresult r = cuOccupancyMaxPotentialClusterSize(&n, f, &config);
  return r == CUDA_SUCCESS ? n : -static_cast<int>(r);
}

int main() {
  CHECK_RT(cudaFree(nullptr));
  CUdevice dev;
  CHECK_CU(cuCtxGetDevice(&dev));
  char name[256] = {};
  CHECK_CU(cuDeviceGetName(name, sizeof name, dev));
  int driver = 0;
  CHECK_CU(cuDriverGetVersion(&driver));
  const int sms = attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  const int optin = attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  std::printf("{\n\"schema\": \"cudatool-clusters-record-1\",\n");
  std::printf(
      "\"device\": {\"name\": \"%s\", \"driver_version\": %d, \"compute_capability\": \"%d.%d\"",
      name, driver, attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
      attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
  std::printf(", \"sm_count\": %d, \"cluster_launch\": %d", sms,
              attr(dev, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH));
  std::printf(", \"max_blocks_per_multiprocessor\": %d, \"max_threads_per_multiprocessor\": %d",
              attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR),
              attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR));
  std::printf(", \"shared_memory_per_block_optin\": %d, \"shared_memory_per_multiprocessor\": %d",
              optin, attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR));
  std::printf(", \"reserved_shared_memory_per_block\": %d, \"registers_per_multiprocessor\": %d",
              attr(dev, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK),
              attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR));
  std::printf(", \"pci_bus_id\": %d, \"multi_gpu_board\": %d}",
              attr(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
              attr(dev, CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD));

  const Kernel kernels[] = {
      {"live_0", reinterpret_cast<const void*>(&live_values<0>), true},
      {"live_16", reinterpret_cast<const void*>(&live_values<16>), true},
      {"live_40", reinterpret_cast<const void*>(&live_values<40>), true},
      {"live_72", reinterpret_cast<const void*>(&live_values<72>), true},
      {"live_120", reinterpret_cast<const void*>(&live_values<120>), true},
      {"live_230", reinterpret_cast<const void*>(&live_values<230>), true},
      {"dims_2", reinterpret_cast<const void*>(&dims_2), false},
      {"dims_3", reinterpret_cast<const void*>(&dims_3), false},
      {"dims_4", reinterpret_cast<const void*>(&dims_4), false},
      {"dims_8", reinterpret_cast<const void*>(&dims_8), false},
      {"dims_2x2", reinterpret_cast<const void*>(&dims_2x2), false},
      {"dims_16", reinterpret_cast<const void*>(&dims_16), false},
      {"dims_4_lb", reinterpret_cast<const void*>(&dims_4_lb), false},
  };
  std::vector<int> smem_sizes = {0,      1024,   4096,   8192,   12288,  16384,  24576,
                                 32768,  40960,  49152,  65536,  81920,  100000, 116736,
                                 131072, 150000, 163840, 200000, 220000, optin};
  std::printf(",\n\"kernels\": [");
  bool first_kernel = true;
  for (const Kernel& k : kernels) {
    cudaFunction_t rf;
    CHECK_RT(cudaGetFuncBySymbol(&rf, k.symbol));
    CUfunction f = reinterpret_cast<CUfunction>(rf);
    const int static_smem = fattr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                optin - static_smem));
    const int potential_portable_16 = potential_size(f, 128, 0);
    CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    const int max_threads = fattr(f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    std::printf("%s\n{\"name\": \"%s\", \"num_regs\": %d, \"static_shared\": %d, \"local\": %d",
                first_kernel ? "" : ",", k.name, fattr(f, CU_FUNC_ATTRIBUTE_NUM_REGS), static_smem,
                fattr(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES));
    first_kernel = false;
    std::printf(", \"max_threads_per_block\": %d, \"required_cluster\": [%d, %d, %d]", max_threads,
                fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH),
                fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT),
                fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH));
    std::printf(", \"cluster_size_must_be_set\": %d, \"potential_128_portable\": %d",
                fattr(f, CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET), potential_portable_16);
    // rows: [threads, dynamic shared, blocks per SM, potential cluster size (non-portable
    // allowed), then max active clusters for cluster sizes 1..16 (X,1,1), or for the
    // compiled-in dims]
    std::printf(",\n \"rows\": [");
    bool first_row = true;
    for (int threads = 32; threads <= 1024; threads += 32) {
      if (threads > max_threads) break;
      for (int smem : smem_sizes) {
        if (smem + static_smem > optin) continue;
        const int dyn = smem == optin ? optin - static_smem : smem;
        int per_sm = 0;
        CUresult r =
            cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&per_sm, f, threads, dyn, 0);
        if (r != CUDA_SUCCESS) per_sm = -static_cast<int>(r);
        std::printf("%s\n  [%d, %d, %d, %d", first_row ? "" : ",", threads, dyn, per_sm,
                    potential_size(f, threads, dyn));
        first_row = false;
        if (k.launch_cluster) {
          for (int c = 1; c <= 16; ++c)
            std::printf(", %d", active_clusters(f, threads, dyn, c, 1, 1, true));
        } else {
          std::printf(
              ", %d",
              active_clusters(f, threads, dyn, fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH),
                              std::max(1, fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT)),
                              std::max(1, fattr(f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH)),
                              false, 4));
        }
        std::printf("]");
      }
    }
    std::printf("]");
    // Shapes: every X,Y,Z with a product up to 16, at a few block sizes, for the first kernel.
    if (k.launch_cluster && std::string(k.name) == "live_0") {
      std::printf(",\n \"shapes\": [");
      bool first_shape = true;
      for (int threads : {128, 256, 1024})
        for (int smem : {0, 49152, 116736})
          for (int x = 1; x <= 16; ++x)
            for (int y = 1; x * y <= 16; ++y)
              for (int z = 1; x * y * z <= 16; ++z) {
                std::printf("%s\n  [%d, %d, %d, %d, %d, %d, %d]", first_shape ? "" : ",", threads,
                            smem, x, y, z, active_clusters(f, threads, smem, x, y, z, true),
                            active_clusters(f, threads, smem, x, y, z, true, 7));
                first_shape = false;
              }
      std::printf("]");
      // Without the non-portable permission: sizes above 8.
      CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0));
      std::printf(",\n \"portable_only\": [");
      for (int c = 1; c <= 16; ++c)
        std::printf("%s%d", c == 1 ? "" : ", ", active_clusters(f, 256, 0, c, 1, 1, true));
      std::printf("], \"portable_only_potential\": [");
      bool fp = true;
      for (int threads : {32, 128, 256, 1024})
        for (int smem : {0, 116736}) {
          std::printf("%s[%d, %d, %d]", fp ? "" : ", ", threads, smem,
                      potential_size(f, threads, smem));
          fp = false;
        }
      std::printf("]");
      CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    }
    std::printf("}");
  }
  std::printf("\n]");

  // Placement: co-resident clusters, each block's SM. SMs that share a cluster are in one GPC.
  cudaFunction_t wf;
  CHECK_RT(cudaGetFuncBySymbol(&wf, reinterpret_cast<const void*>(&where)));
  CUfunction wcu = reinterpret_cast<CUfunction>(wf);
  CHECK_CU(cuFuncSetAttribute(wcu, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
  CHECK_CU(cuFuncSetAttribute(wcu, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
  std::vector<int> parent(1024);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  std::printf(",\n\"placements\": [");
  bool first_p = true;
  for (int c : {16, 8, 4, 2, 16, 12, 6}) {
    for (int smem : {116736, 0}) {
      const int threads = 32;
      const int clusters = active_clusters(wcu, threads, smem, c, 1, 1, true);
      if (clusters <= 0) continue;
      const int blocks = clusters * c;
      unsigned *d_sm, *d_cl;
      CHECK_RT(cudaMalloc(&d_sm, blocks * sizeof(unsigned)));
      CHECK_RT(cudaMalloc(&d_cl, blocks * sizeof(unsigned)));
      cudaLaunchConfig_t cfg{};
      cfg.gridDim = dim3(blocks);
      cfg.blockDim = dim3(threads);
      cfg.dynamicSmemBytes = smem;
      cudaLaunchAttribute la[1];
      la[0].id = cudaLaunchAttributeClusterDimension;
      la[0].val.clusterDim.x = c;
      la[0].val.clusterDim.y = 1;
      la[0].val.clusterDim.z = 1;
      cfg.attrs = la;
      cfg.numAttrs = 1;
      CHECK_RT(cudaLaunchKernelEx(&cfg, where, d_sm, d_cl, 20000000LL));
      CHECK_RT(cudaDeviceSynchronize());
      std::vector<unsigned> sm(blocks), cl(blocks);
      CHECK_RT(cudaMemcpy(sm.data(), d_sm, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
      CHECK_RT(cudaMemcpy(cl.data(), d_cl, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
      cudaFree(d_sm);
      cudaFree(d_cl);
      std::printf(
          "%s\n {\"cluster\": %d, \"dynamic_shared\": %d, \"clusters\": %d, \"sm_of_block\": [",
          first_p ? "" : ",", c, smem, clusters);
      first_p = false;
      for (int b = 0; b < blocks; ++b) std::printf("%s%u", b ? "," : "", sm[b]);
      std::printf("]}");
      for (int b = 0; b < blocks; ++b) {
        const int head = static_cast<int>(sm[(b / c) * c]);
        parent[find(static_cast<int>(sm[b]))] = find(head);
      }
    }
  }
  std::printf("\n],\n\"sm_groups\": [");
  std::map<int, std::vector<int>> groups;
  for (int s = 0; s < sms; ++s) groups[find(s)].push_back(s);
  bool fg = true;
  for (auto& [root, members] : groups) {
    std::printf("%s\n [", fg ? "" : ",");
    fg = false;
    for (std::size_t i = 0; i < members.size(); ++i) std::printf("%s%d", i ? "," : "", members[i]);
    std::printf("]");
  }
  std::printf("\n]\n}\n");
  return 0;
}
