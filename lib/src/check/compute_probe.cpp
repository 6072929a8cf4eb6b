// The compute probe: the embedded fill kernel writes a pattern on every SM (each block
// marks the SM it ran on), verified word by word on the host; the result names the form
// the driver loaded (SASS or PTX compiled for this device).
#include <string>
#include <vector>

#include "check/probes.hpp"

namespace cudatool::check::detail {

using cudatool::detail::DeviceBuffer;
using cudatool::detail::PinnedBuffer;

void run_compute(DeviceRun& run, const Options& options, ComputeBuffers& buffers) {
  run.ensure_module();
  const std::uint64_t n = kComputeBytes / 4;
  buffers.device = std::make_unique<DeviceBuffer>(run.ctx(), kComputeBytes);
  DeviceBuffer sm_seen(run.ctx(), kSmSlots * 4);
  run.zero(sm_seen.get(), kSmSlots * 4);
  const std::uint64_t fault = options.inject_compute_fault ? n / 2 + 12345 : ~0ull;
  run.fill(buffers.device->get(), n, kSeedCompute, sm_seen.get(), fault);
  run.stream->synchronize();
  buffers.host = std::make_unique<PinnedBuffer>(run.ctx(), kComputeBytes);
  CUDATOOL_CU(cuMemcpyDtoHAsync, buffers.host->get(), buffers.device->get(), kComputeBytes,
              run.stream->get());
  std::vector<std::uint32_t> seen(kSmSlots);
  CUDATOOL_CU(cuMemcpyDtoHAsync, seen.data(), sm_seen.get(), kSmSlots * 4, run.stream->get());
  run.stream->synchronize();
  int sms = 0;
  for (auto s : seen) sms += s != 0;
  std::string first_bad;
  const std::uint64_t bad = verify_on_host(buffers.host->words(), n, kSeedCompute, &first_bad);
  // What the driver loaded: the architecture it compiled for and the PTX it came from.
  int binary = 0, ptx = 0;
  CUfunction f = run.module->function("cudatool_check_fill");
  CUDATOOL_CU(cuFuncGetAttribute, &binary, CU_FUNC_ATTRIBUTE_BINARY_VERSION, f);
  CUDATOOL_CU(cuFuncGetAttribute, &ptx, CU_FUNC_ATTRIBUTE_PTX_VERSION, f);
  std::string form = kernel_form(run.info.compute_capability, sass_list(), embedded_ptx());
  form += " (binary version " + std::to_string(binary) + ", from PTX " + std::to_string(ptx) + ")";
  CheckResult r = compute_result(bad, n, sms, run.info.multiprocessor_count, form, first_bad);
  mark_shared(r, run.sharers, options.occupancy);
  run.results.push_back(r);
}

}  // namespace cudatool::check::detail
