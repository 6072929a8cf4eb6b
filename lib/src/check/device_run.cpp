#include "check/device_run.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <utility>

#include "cudatool/base/error.hpp"
#include "memory/buffers.hpp"

namespace cudatool::check::detail {

// The embedded fatbin of check_kernels.cu (lib/embed_file.cmake writes its definitions).
extern const unsigned char check_fatbin[];
extern const std::size_t check_fatbin_size;
extern const int check_fatbin_sass[];  // ends with 0
extern const int check_fatbin_ptx;

using cudatool::detail::DeviceBuffer;
using cudatool::detail::Event;
using cudatool::detail::Stream;

std::span<const int> sass_list() {
  std::size_t n = 0;
  while (check_fatbin_sass[n] != 0) ++n;
  return {check_fatbin_sass, n};
}

int embedded_ptx() {
  return check_fatbin_ptx;
}

void DeviceRun::ensure_context() {
  if (context) return;
  context = std::make_unique<Context>(device);
  stream = std::make_unique<Stream>(ctx());
}

void DeviceRun::ensure_module() {
  ensure_context();
  if (module) return;
  module = std::make_unique<Module>(
      *context, std::string_view(reinterpret_cast<const char*>(check_fatbin), check_fatbin_size));
}

void DeviceRun::zero(CUdeviceptr pointer, std::size_t bytes) {
  CUDATOOL_CU(cuMemsetD8Async, pointer, static_cast<unsigned char>(0), bytes, stream->get());
}

unsigned DeviceRun::grid() const {
  return static_cast<unsigned>(std::max(1, info.multiprocessor_count) * 4);
}

void DeviceRun::fill(CUdeviceptr out, std::uint64_t n, std::uint32_t seed, CUdeviceptr sm_seen,
                     std::uint64_t fault_index) {
  CUfunction f = module->function("cudatool_check_fill");
  void* args[] = {&out, &n, &seed, &sm_seen, &fault_index};
  CUDATOOL_CU(cuLaunchKernel, f, grid(), 1u, 1u, kThreads, 1u, 1u, 0u, stream->get(), args,
              nullptr);
}

std::uint64_t DeviceRun::verify_on_device(CUdeviceptr data, std::uint64_t n, std::uint32_t seed) {
  DeviceBuffer counter(ctx(), sizeof(unsigned long long));
  zero(counter.get(), sizeof(unsigned long long));
  CUfunction f = module->function("cudatool_check_verify");
  CUdeviceptr counter_ptr = counter.get();
  void* args[] = {&data, &n, &seed, &counter_ptr};
  CUDATOOL_CU(cuLaunchKernel, f, grid(), 1u, 1u, kThreads, 1u, 1u, 0u, stream->get(), args,
              nullptr);
  stream->synchronize();
  unsigned long long mismatches = 0;
  CUDATOOL_CU(cuMemcpyDtoH, &mismatches, counter.get(), sizeof mismatches);
  return mismatches;
}

std::vector<double> time_ops(const Stream& stream, int warmups, int reps,
                             const std::function<void()>& op,
                             const std::function<void()>& between) {
  for (int i = 0; i < warmups; ++i) op();
  std::vector<Event> events;
  events.reserve(2 * reps);
  for (int i = 0; i < 2 * reps; ++i) events.emplace_back();
  for (int i = 0; i < reps; ++i) {
    events[2 * i].record(stream);
    op();
    events[2 * i + 1].record(stream);
  }
  if (between) between();
  stream.synchronize();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) ms.push_back(events[2 * i + 1].elapsed_ms_since(events[2 * i]));
  return ms;
}

double gbps(std::size_t bytes, double ms) {
  return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0;
}

std::uint64_t verify_on_host(const std::uint32_t* data, std::uint64_t n, std::uint32_t seed,
                             std::string* first_bad) {
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint32_t expected = pattern(i, seed);
    if (data[i] != expected) {
      if (bad++ == 0 && first_bad) {
        char text[128];
        std::snprintf(text, sizeof text, "element %llu is 0x%08x, expected 0x%08x",
                      static_cast<unsigned long long>(i), data[i], expected);
        *first_bad = text;
      }
    }
  }
  return bad;
}

// A result that carries no reading: only its verdict and why.
static CheckResult without_reading(Kind kind, std::string name, Verdict verdict,
                                   const std::string& why) {
  CheckResult r;
  r.kind = kind;
  r.name = std::move(name);
  r.verdict = verdict;
  r.reason = why;
  return r;
}

CheckResult failed(Kind kind, std::string name, const std::string& why) {
  return without_reading(kind, std::move(name), Verdict::fail, why);
}

CheckResult skipped(Kind kind, std::string name, const std::string& why) {
  return without_reading(kind, std::move(name), Verdict::skipped, why);
}

bool out_of_memory(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  return error && error->code() == CUDA_ERROR_OUT_OF_MEMORY;
}

bool out_of_memory_while_shared(const DeviceRun& run, const std::exception& e) {
  return out_of_memory(e) && !run.sharers.empty();
}

CheckResult out_of_memory_result(Kind kind, std::string name, const std::string& what,
                                 const std::string& who, bool require_idle) {
  CheckResult r = failed(kind, std::move(name), what + "; other processes hold the memory: " + who);
  r.verdict = require_idle ? Verdict::fail : Verdict::warn;
  r.shared_with = who;
  return r;
}

}  // namespace cudatool::check::detail
