// The compile tests' kernel corpus (tests/data/compile) and helpers shared by the unit,
// CLI and GPU tests of `cudatool compile`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/compile/compiler.hpp"

namespace cudatool::testing {

struct CorpusFile {
  std::string name;  // "saxpy.cu"
  std::string path;  // absolute
  int maxrregcount = 0;
};

// Every .cu file of tests/data/compile, sorted by name (maxrreg_spill.cu gets 32).
std::vector<CorpusFile> compile_corpus();

// Why NVRTC cannot be used here, or nullopt when it can.
std::optional<std::string> nvrtc_unavailable();

// One kernel's figures in ptxas's verbose report (NVRTC's log with --ptxas-options=-v, or
// nvcc --resource-usage): registers, static shared memory ("bytes smem", 0 when absent)
// and the stack frame, by mangled name.
struct PtxasFigures {
  int registers = -1;
  int shared = 0;
  int stack_frame = -1;
};
std::map<std::string, PtxasFigures> parse_ptxas_report(const std::string& log);

std::string read_file(const std::string& path);

// `file` compiled by NVRTC for `arch`, uncached, as the GPU tests load it.
CompileResult compile_corpus_file(const CorpusFile& file, const Arch& arch);

}  // namespace cudatool::testing
