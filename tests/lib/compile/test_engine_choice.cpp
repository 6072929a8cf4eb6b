// The engine choice, its retries and the failure diagnosis (engine_choice.hpp): pure rules
// over a request and a source scan, checked here without a compiler or a file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudatool/compile/engine_choice.hpp"

namespace cudatool {
namespace {

CompileRequest request() {
  CompileRequest r;
  r.source = "__global__ void k(float* p) { *p = 1; }\n";
  r.arch = Arch::parse("sm_90", "test");
  return r;
}

EngineChoice choose(const CompileRequest& r, const SourceScan& scan = {}) {
  return choose_engine(r, scan);
}

TEST(EngineChoice, DeviceCodeGetsNvrtc) {
  const EngineChoice c = choose(request());
  EXPECT_EQ(c.engine, Engine::nvrtc);
  EXPECT_EQ(c.reason, "device code only");
  SourceScan scan;
  scan.toolkit = {"cooperative_groups.h", "cuda_fp16.h", "cuda/std/atomic"};
  scan.found = {"/project/tile.h"};
  EXPECT_EQ(choose(request(), scan).engine, Engine::nvrtc);
}

TEST(EngineChoice, ARequestedEngineIsTakenAsItIsNamedByTheCaller) {
  CompileRequest r = request();
  r.engine = Engine::nvrtc;
  SourceScan host;
  host.has_main = true;
  host.unresolved = {"cstdio"};
  EXPECT_EQ(choose(r, host).engine, Engine::nvrtc);
  EXPECT_EQ(choose(r, host).reason, "requested engine nvrtc");
  r.engine = Engine::nvcc;
  r.sources.engine = "--compiler";
  EXPECT_EQ(choose(r).engine, Engine::nvcc);
  EXPECT_EQ(choose(r).reason, "--compiler nvcc");
}

TEST(EngineChoice, HostCodeGetsNvcc) {
  SourceScan scan;
  scan.unresolved = {"cstdio"};
  EXPECT_EQ(choose(request(), scan).engine, Engine::nvcc);
  EXPECT_EQ(choose(request(), scan).reason,
            "host code: <cstdio> is a host header NVRTC has not got");
  scan = {};
  scan.toolkit = {"cuda_fp16.h", "cuda_runtime.h"};
  EXPECT_EQ(choose(request(), scan).reason, "host code: <cuda_runtime.h> is host API");
  scan.toolkit = {"thrust/sort.h"};
  EXPECT_EQ(choose(request(), scan).engine, Engine::nvcc);
  scan = {};
  scan.has_main = true;
  EXPECT_EQ(choose(request(), scan).reason, "host code: the file defines main");
}

TEST(EngineChoice, CubGetsNvccAfterEveryHostCodeRule) {
  SourceScan scan;
  scan.toolkit = {"cub/block/block_reduce.cuh"};
  EXPECT_EQ(choose(request(), scan).engine, Engine::nvcc);
  EXPECT_NE(choose(request(), scan).reason.find("<cub/block/block_reduce.cuh>"), std::string::npos);
  scan.has_main = true;
  EXPECT_EQ(choose(request(), scan).reason, "host code: the file defines main");
}

TEST(EngineChoice, InternalLinkageKernelsGetNvccWhereTheirNamesComeFromThePath) {
  SourceScan scan;
  scan.anonymous_namespace_kernels = true;
  EXPECT_EQ(choose(request(), scan).engine, Engine::nvcc);
  scan = {};
  scan.static_kernels = true;
  EXPECT_EQ(choose(request(), scan).engine, Engine::nvrtc);  // without -rdc: same names
  CompileRequest rdc = request();
  rdc.rdc = true;
  EXPECT_EQ(choose(rdc, scan).engine, Engine::nvcc);
}

TEST(EngineChoice, NvccOptions) {
  CompileRequest r = request();
  r.nvcc_options = {"-O3"};
  EXPECT_EQ(choose(r).engine, Engine::nvcc);
  EXPECT_EQ(choose(r).reason, "nvcc options given");
  r.sources.nvcc_options = "-Xnvcc options";
  EXPECT_EQ(choose(r).reason, "-Xnvcc options given");
  // Options for both engines: the choice is the file's.
  r.nvrtc_options = {"-lineinfo"};
  EXPECT_EQ(choose(r).engine, Engine::nvrtc);
  // A switch NVRTC has no equivalent for decides, whatever else is given.
  r.nvcc_options = {"-O3", "--expt-relaxed-constexpr"};
  EXPECT_EQ(choose(r).engine, Engine::nvcc);
  EXPECT_EQ(choose(r).reason,
            "--expt-relaxed-constexpr: an nvcc option NVRTC has no equivalent for");
}

TEST(EngineRetry, NvrtcRejectingHostCodeFallsBackToNvccOnlyWhenNoEngineWasNamed) {
  const std::string host_log =
      "k.cu(1): error: ... host functions are not allowed in JIT mode. Consider ...";
  const std::string missing_log = "k.cu(1): catastrophic error: cannot open source file \"x.h\"";
  CompileRequest r = request();
  EXPECT_EQ(retry_after_failure(r, Engine::nvrtc, host_log), Retry::with_nvcc);
  EXPECT_EQ(retry_after_failure(r, Engine::nvrtc, missing_log), Retry::with_nvcc);
  EXPECT_EQ(retry_after_failure(r, Engine::nvcc, host_log), Retry::none);
  r.engine = Engine::nvrtc;
  EXPECT_EQ(retry_after_failure(r, Engine::nvrtc, host_log), Retry::none);
}

TEST(EngineRetry, DeviceSideLaunchesAddRdcOnce) {
  const std::string log =
      "k.cu(2): error: device-side kernel launch could not be processed as the required "
      "runtime APIs are not declared";
  EXPECT_TRUE(log_needs_rdc(log));
  EXPECT_TRUE(log_needs_rdc("ptxas fatal   : Unresolved extern function '_Z1fv'"));
  EXPECT_FALSE(log_needs_rdc("k.cu(1): error: expected a \";\""));
  CompileRequest r = request();
  EXPECT_EQ(retry_after_failure(r, Engine::nvrtc, log), Retry::with_rdc);
  EXPECT_EQ(retry_after_failure(r, Engine::nvcc, log), Retry::with_rdc);
  r.rdc = true;
  EXPECT_EQ(retry_after_failure(r, Engine::nvrtc, log), Retry::none);
  r.rdc = false;
  r.engine = Engine::nvcc;
  EXPECT_EQ(retry_after_failure(r, Engine::nvcc, log), Retry::none);
  EXPECT_EQ(retry_after_failure(request(), Engine::nvrtc, "error: expected a \";\""), Retry::none);
}

std::vector<CompileFailureCause::Kind> kinds(const std::vector<CompileFailureCause>& causes) {
  std::vector<CompileFailureCause::Kind> out;
  for (const auto& c : causes) out.push_back(c.kind);
  return out;
}

TEST(FailureDiagnosis, NamesWhatWentWrongForEachEngine) {
  using Kind = CompileFailureCause::Kind;
  CompileRequest r = request();
  const auto nvrtc = diagnose_failure(
      "k.cu(1): catastrophic error: cannot open source file \"cstdio\"", r, Engine::nvrtc);
  ASSERT_EQ(kinds(nvrtc), std::vector<Kind>{Kind::nvrtc_missing_header});
  EXPECT_EQ(nvrtc[0].header, "cstdio");
  EXPECT_EQ(kinds(diagnose_failure("host functions are not allowed in JIT mode", r, Engine::nvrtc)),
            std::vector<Kind>{Kind::nvrtc_host_functions});
  EXPECT_EQ(kinds(diagnose_failure("k.cu(1): catastrophic error: cannot open source file \"x.h\"",
                                   r, Engine::nvcc)),
            std::vector<Kind>{Kind::missing_header});
  EXPECT_EQ(kinds(diagnose_failure("k.cu:1:10: fatal error: x.h: No such file or directory", r,
                                   Engine::nvcc)),
            std::vector<Kind>{Kind::missing_header});
  const std::string linkage = "error: this declaration may not have extern \"C\" linkage";
  r.extern_c = true;
  EXPECT_EQ(kinds(diagnose_failure(linkage, r, Engine::nvrtc)),
            std::vector<Kind>{Kind::extern_c_wrap});
  r.extern_c = false;
  EXPECT_EQ(kinds(diagnose_failure(linkage, r, Engine::nvrtc)),
            std::vector<Kind>{Kind::extern_c_block});
  const std::string launch =
      "error: device-side kernel launch could not be processed as the "
      "required runtime APIs are not declared";
  EXPECT_EQ(kinds(diagnose_failure(launch, r, Engine::nvrtc)), std::vector<Kind>{Kind::needs_rdc});
  r.rdc = true;
  EXPECT_TRUE(diagnose_failure(launch, r, Engine::nvrtc).empty());
  EXPECT_TRUE(diagnose_failure("error: expected a \";\"", r, Engine::nvcc).empty());
}

}  // namespace
}  // namespace cudatool
