#include "cudatool/compile/driver_clusters.hpp"

#include <algorithm>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/compile/module.hpp"
#include "driver/driver_api.hpp"

namespace cudatool {
namespace {

// An empty kernel; the driver JIT-compiles it for the device.
constexpr const char* kStandInPtx =
    ".version 7.8\n"
    ".target sm_90\n"
    ".address_size 64\n"
    ".visible .entry cudatool_cluster_stand_in()\n"
    "{\n"
    "\tret;\n"
    "}\n";

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  CUDATOOL_CU(cuDeviceGetAttribute, &value, which, device);
  return value;
}

int blocks_per_sm(CUfunction function, int shared) {
  int blocks = 0;
  CUDATOOL_CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, &blocks, function, 32,
              static_cast<std::size_t>(shared), 0u);
  return blocks;
}

CUlaunchConfig launch_config(int x, int y, int z, int shared, CUlaunchAttribute* attribute) {
  CUlaunchConfig config{};
  config.gridDimX = static_cast<unsigned>(x);
  config.gridDimY = static_cast<unsigned>(y);
  config.gridDimZ = static_cast<unsigned>(z);
  config.blockDimX = 32;
  config.blockDimY = 1;
  config.blockDimZ = 1;
  config.sharedMemBytes = static_cast<unsigned>(shared);
  attribute->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute->value.clusterDim.x = static_cast<unsigned>(x);
  attribute->value.clusterDim.y = static_cast<unsigned>(y);
  attribute->value.clusterDim.z = static_cast<unsigned>(z);
  config.attrs = attribute;
  config.numAttrs = 1;
  return config;
}

}  // namespace

DriverClusterAnswer driver_cluster_occupancy(const Context& context, int blocks, int x, int y,
                                             int z, bool non_portable, int sizes) {
  const auto& api = driver::api();
  if (!api.cuOccupancyMaxActiveClusters || !api.cuOccupancyMaxPotentialClusterSize)
    throw RequirementError(
        "the driver has no cuOccupancyMaxActiveClusters (CUDA 12.0 and later drivers have it)");
  if (blocks < 1 || blocks > 32 || x < 1 || y < 1 || z < 1)
    throw UsageError("driver cluster occupancy: blocks per SM 1..32 and dimensions of at least 1");
  const Module module(context, kStandInPtx);
  CUfunction function = module.function("cudatool_cluster_stand_in");
  const CUdevice device = context.device().handle();
  const int optin = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  const int per_sm = attribute(device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  const int reserved = attribute(device, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  CUDATOOL_CU(cuFuncSetAttribute, function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
  CUDATOOL_CU(cuFuncSetAttribute, function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
              non_portable ? 1 : 0);
  // The most shared memory that still fits `blocks` per SM, stepped down until the driver
  // agrees (allocation granularity): the stand-in then has exactly `blocks` per SM.
  DriverClusterAnswer answer;
  int shared = blocks == 1 ? optin : std::min(optin, per_sm / blocks - reserved);
  while (shared > 0 && blocks_per_sm(function, shared) < blocks) shared -= 128;
  if (shared < 0) shared = 0;
  answer.stand_in_shared_memory = shared;
  answer.stand_in_blocks_per_sm = blocks_per_sm(function, shared);
  if (answer.stand_in_blocks_per_sm != blocks && blocks < 32)
    throw RuntimeError("the driver gives the cluster stand-in kernel " +
                       std::to_string(answer.stand_in_blocks_per_sm) + " blocks per SM, not " +
                       std::to_string(blocks));
  CUlaunchAttribute cluster_attribute{};
  auto clusters = [&](int cx, int cy, int cz) {
    CUlaunchConfig c = launch_config(cx, cy, cz, shared, &cluster_attribute);
    int n = 0;
    const CUresult r = driver::unchecked("cuOccupancyMaxActiveClusters",
                                         api.cuOccupancyMaxActiveClusters, &n, function, &c);
    if (r == CUDA_ERROR_INVALID_CLUSTER_SIZE) return 0;  // a size the kernel may not launch
    if (r != CUDA_SUCCESS) throw_driver_error("cuOccupancyMaxActiveClusters", static_cast<int>(r));
    return n;
  };
  answer.max_active_clusters = clusters(x, y, z);
  for (int size = 1; size <= sizes; ++size) answer.by_size.push_back(clusters(size, 1, 1));
  CUlaunchConfig config = launch_config(1, 1, 1, shared, &cluster_attribute);
  config.attrs = nullptr;
  config.numAttrs = 0;
  config.gridDimX = 48;  // a multiple of every size the query may give
  config.gridDimY = config.gridDimZ = 1;
  CUDATOOL_CU(cuOccupancyMaxPotentialClusterSize, &answer.max_potential_cluster_size, function,
              &config);
  return answer;
}

}  // namespace cudatool
