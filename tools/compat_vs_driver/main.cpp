// compat_vs_driver FILE...: `cudatool compat`'s verdict for every fatbin container of each
// FILE on this machine's first GPU, against the driver: each container is handed to
// cuModuleLoadDataEx (run it under CUDA_CACHE_DISABLE=1, and again under CUDA_FORCE_PTX_JIT=1
// and CUDA_DISABLE_PTX_JIT=1: the library reads the same variables), and what the driver did
// is compared with the decision (compat.hpp):
//  - native: loads, without compiling (CU_JIT_WALL_TIME 0), and the kernels' binary version
//    is the chosen SASS entry's;
//  - jit: loads by compiling (wall time > 0), binary version the GPU's, PTX version the
//    chosen PTX entry's;
//  - no_binary, ptx_too_new, jit_disabled: CUDA_ERROR_NO_BINARY_FOR_GPU,
//    CUDA_ERROR_UNSUPPORTED_PTX_VERSION, CUDA_ERROR_JIT_COMPILATION_DISABLED.
// Prints each difference, a line per file and "TOTAL: ... N differences"; exit 0 when
// something was compared and nothing differed, 1 otherwise. Containers of archive members
// are not loaded (the tool maps plain files). --max-jit-ptx BYTES skips loading containers
// whose PTX to compile is larger, and --jit-sample N loads at most N of a file's containers
// that are to be JIT-compiled (both counted and printed as skipped), to bound a run's time.
// Each PTX entry's text is read too: its `.version` must be the one its fatbin entry header
// records (what compat reads), counted as "PTX versions".
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/mapped_file.hpp"
#include "cudatool/base/parallel.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/compat/compat.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/device.hpp"
#include "driver/driver_api.hpp"
#include "exit_status.hpp"

namespace {

using namespace cudatool;

struct Observed {
  CUresult result = CUDA_SUCCESS;
  float wall_ms = 0;
  int binary_version = -1, ptx_version = -1;  // of the first kernel, -1 without one
  double load_ms = 0;
};

Observed load(std::span<const std::uint8_t> bytes, CUcontext context) {
  const auto& api = driver::initialized();
  api.cuCtxSetCurrent(context);
  Observed o;
  CUjit_option options[] = {CU_JIT_WALL_TIME};
  void* values[] = {nullptr};
  CUmodule module = nullptr;
  const auto start = std::chrono::steady_clock::now();
  o.result = api.cuModuleLoadDataEx(&module, bytes.data(), 1, options, values);
  o.load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (o.result != CUDA_SUCCESS) return o;
  std::memcpy(&o.wall_ms, &values[0], sizeof o.wall_ms);
  unsigned count = 0;
  if (api.cuModuleGetFunctionCount(&count, module) == CUDA_SUCCESS && count > 0) {
    std::vector<CUfunction> functions(count);
    if (api.cuModuleEnumerateFunctions(functions.data(), count, module) == CUDA_SUCCESS) {
      api.cuFuncGetAttribute(&o.binary_version, CU_FUNC_ATTRIBUTE_BINARY_VERSION, functions[0]);
      api.cuFuncGetAttribute(&o.ptx_version, CU_FUNC_ATTRIBUTE_PTX_VERSION, functions[0]);
    }
  }
  api.cuModuleUnload(module);
  return o;
}

const char* error_name(CUresult r) {
  const char* name = nullptr;
  driver::initialized().cuGetErrorName(r, &name);
  return name ? name : "?";
}

struct Totals {
  std::size_t containers = 0, differences = 0, skipped = 0, members = 0;
  std::size_t ptx_entries = 0, ptx_version_mismatches = 0;
  std::size_t by_outcome[5] = {0, 0, 0, 0, 0};
  double native_ms_max = 0, jit_ms_min = 1e9;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  std::uint64_t max_jit_ptx = UINT64_MAX;
  std::size_t jit_sample = SIZE_MAX;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--max-jit-ptx" && i + 1 < argc)
      max_jit_ptx = std::stoull(argv[++i]);
    else if (a == "--jit-sample" && i + 1 < argc)
      jit_sample = std::stoull(argv[++i]);
    else
      files.push_back(a);
  }
  if (files.empty()) {
    std::cerr << "usage: compat_vs_driver [--max-jit-ptx BYTES] FILE...\n";
    return 2;
  }
  try {
    const Context context(Device(0));
    const ComputeCapability cc = context.device().compute_capability();
    const CompatDriver driver = machine_compat_driver();
    const JitPolicy policy = jit_policy_from_environment();
    std::cout << "device: " << context.device().name() << " (" << cc.sm() << "), driver "
              << driver.release << " (CUDA " << driver.cuda.str() << "), policy "
              << (policy == JitPolicy::normal          ? "normal"
                  : policy == JitPolicy::force_ptx_jit ? "CUDA_FORCE_PTX_JIT=1"
                                                       : "CUDA_DISABLE_PTX_JIT=1")
              << "\n";
    Totals total;
    std::size_t unreadable = 0;
    std::mutex lines_mutex;
    std::size_t printed = 0;
    for (const std::string& path : files) {
      CompatRequest request;
      request.paths = {path};
      request.targets = {{context.device().name(), cc, "device 0"}};
      request.driver = driver;
      request.policy = policy;
      request.containers = true;
      request.read_ptx_text = true;
      CompatReport report;
      try {
        report = check_compat(request);
      } catch (const std::exception& e) {
        ++unreadable;
        std::cout << "SKIPPED " << printable(e.what(), 300) << "\n";
        continue;
      }
      const MappedFile mapped(path);
      const auto bytes = mapped.bytes();
      std::vector<const CompatContainer*> containers;
      std::size_t jit_taken = 0, sampled_out = 0;
      for (const CompatContainer& c : report.containers) {
        for (const ScannedImage& e : c.entries) {
          if (e.kind != ImageKind::ptx) continue;
          ++total.ptx_entries;
          if (e.ptx_version != e.ptx_text_version) {
            ++total.ptx_version_mismatches;
            std::cout << "PTX VERSION " << printable(path, 200) << " @" << e.offset << ": header "
                      << (e.ptx_version ? std::to_string(e.ptx_version->major) + "." +
                                              std::to_string(e.ptx_version->minor)
                                        : "none")
                      << ", text "
                      << (e.ptx_text_version ? std::to_string(e.ptx_text_version->major) + "." +
                                                   std::to_string(e.ptx_text_version->minor)
                                             : "none")
                      << "\n";
          }
        }
        if (!c.member.empty()) {
          ++total.members;
          continue;
        }
        if (c.decisions.at(0).outcome == LoadOutcome::jit && jit_taken++ >= jit_sample) {
          ++sampled_out;
          continue;
        }
        containers.push_back(&c);
      }
      std::atomic<std::size_t> differences{0}, skipped{0};
      std::vector<std::size_t> outcomes(5, 0);
      std::mutex m;
      double native_max = 0, jit_min = 1e9;
      parallel_for(containers.size(), 0, [&](std::size_t n) {
        const CompatContainer& c = *containers[n];
        const ContainerDecision& d = c.decisions.at(0);
        const bool bare_cubin = c.section.empty() && c.entries.size() == 1 &&
                                c.entries[0].kind == ImageKind::elf && c.entries[0].offset == 0;
        std::uint64_t size = bytes.size();
        if (!bare_cubin) {
          if (c.offset + 16 > bytes.size()) return;
          std::uint64_t body = 0;
          std::memcpy(&body, bytes.data() + c.offset + 8, 8);
          size = 16 + body;
          if (size > bytes.size() - c.offset) return;
        }
        if (d.outcome == LoadOutcome::jit && c.entries[*d.entry].size > max_jit_ptx) {
          ++skipped;
          return;
        }
        const Observed o = load(bytes.subspan(bare_cubin ? 0 : c.offset, size), context.handle());
        std::string problem;
        const int device_version = cc.major * 10 + cc.minor;
        switch (d.outcome) {
          case LoadOutcome::native: {
            const int expected = c.entries[*d.entry].arch->number();
            if (o.result != CUDA_SUCCESS)
              problem = std::string("expected native, driver: ") + error_name(o.result);
            else if (o.wall_ms > 0)
              problem = "expected native, driver compiled (" + std::to_string(o.wall_ms) + " ms)";
            else if (o.binary_version >= 0 && o.binary_version != expected)
              problem = "expected native " + std::to_string(expected) + ", driver ran binary " +
                        std::to_string(o.binary_version);
            break;
          }
          case LoadOutcome::jit: {
            const int expected_ptx = c.entries[*d.entry].arch->number();
            if (o.result != CUDA_SUCCESS)
              problem = std::string("expected JIT, driver: ") + error_name(o.result);
            else if (o.wall_ms <= 0 && !(o.binary_version >= 0 && o.ptx_version >= 0 &&
                                         o.ptx_version != o.binary_version))
              problem = "expected JIT, driver loaded without compiling (binary " +
                        std::to_string(o.binary_version) + ", ptx " +
                        std::to_string(o.ptx_version) + ")";
            else if (o.binary_version >= 0 &&
                     (o.binary_version != device_version || o.ptx_version != expected_ptx))
              problem = "expected JIT of " + std::to_string(expected_ptx) + ", driver: binary " +
                        std::to_string(o.binary_version) + " ptx " + std::to_string(o.ptx_version);
            break;
          }
          case LoadOutcome::no_binary:
            if (o.result != CUDA_ERROR_NO_BINARY_FOR_GPU)
              problem = std::string("expected CUDA_ERROR_NO_BINARY_FOR_GPU, driver: ") +
                        (o.result == CUDA_SUCCESS ? "loaded" : error_name(o.result));
            break;
          case LoadOutcome::ptx_too_new:
            if (o.result != CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
              problem = std::string("expected CUDA_ERROR_UNSUPPORTED_PTX_VERSION, driver: ") +
                        (o.result == CUDA_SUCCESS ? "loaded" : error_name(o.result));
            break;
          case LoadOutcome::jit_disabled:
            if (o.result != CUDA_ERROR_JIT_COMPILATION_DISABLED)
              problem = std::string("expected CUDA_ERROR_JIT_COMPILATION_DISABLED, driver: ") +
                        (o.result == CUDA_SUCCESS ? "loaded" : error_name(o.result));
            break;
        }
        std::lock_guard lock(m);
        ++outcomes[static_cast<int>(d.outcome)];
        if (o.result == CUDA_SUCCESS && d.outcome == LoadOutcome::native)
          native_max = std::max(native_max, o.load_ms);
        if (o.result == CUDA_SUCCESS && d.outcome == LoadOutcome::jit)
          jit_min = std::min(jit_min, o.load_ms);
        if (problem.empty()) return;
        ++differences;
        std::lock_guard print(lines_mutex);
        if (printed++ < 200) {
          std::ostringstream entries;
          for (const ScannedImage& e : c.entries) {
            if (&e != &c.entries.front()) entries << ',';
            entries << (e.arch ? e.arch->str() : std::string("?"));
            if (e.ptx_version)
              entries << '@' << e.ptx_version->major << '.' << e.ptx_version->minor;
            if (e.relocatable) entries << "(rel)";
          }
          std::cout << "DIFFERENCE " << printable(path, 200) << " " << c.section << "@" << c.offset
                    << " [" << entries.str() << "]: " << problem << "\n";
        }
      });
      skipped += sampled_out;
      const std::size_t compared = containers.size() + sampled_out - skipped;
      std::cout << printable(path, 300) << ": " << compared << " containers (native " << outcomes[0]
                << ", jit " << outcomes[1] << ", no_binary " << outcomes[2] << ", ptx_too_new "
                << outcomes[3] << ", jit_disabled " << outcomes[4] << "), " << differences
                << " differences"
                << (skipped ? ", " + std::to_string(skipped) +
                                  " skipped (PTX over --max-jit-ptx, or past --jit-sample)"
                            : "")
                << std::endl;
      total.containers += compared;
      total.differences += differences;
      total.skipped += skipped;
      for (int k = 0; k < 5; ++k) total.by_outcome[k] += outcomes[k];
      total.native_ms_max = std::max(total.native_ms_max, native_max);
      total.jit_ms_min = std::min(total.jit_ms_min, jit_min);
    }
    std::cout << "TOTAL: " << files.size() << " files (" << unreadable << " not CUDA binaries), "
              << total.containers << " containers loaded and compared (native "
              << total.by_outcome[0] << ", jit " << total.by_outcome[1] << ", no_binary "
              << total.by_outcome[2] << ", ptx_too_new " << total.by_outcome[3] << ", jit_disabled "
              << total.by_outcome[4] << "): " << total.differences
              << " differences; PTX versions: " << total.ptx_version_mismatches << " of "
              << total.ptx_entries << " headers differ from the text; " << total.skipped
              << " skipped (large PTX, or sampled), " << total.members
              << " in archive members not loaded; slowest native load " << total.native_ms_max
              << " ms, fastest JIT load " << (total.jit_ms_min < 1e9 ? total.jit_ms_min : 0)
              << " ms\n";
    return total.differences == 0 && total.ptx_version_mismatches == 0 && total.containers > 0 ? 0
                                                                                               : 1;
  } catch (const std::exception& e) {
    std::cerr << "compat_vs_driver: " << printable(e.what(), 400) << '\n';
    return app::to_int(app::exit_status_for(e));
  }
}
