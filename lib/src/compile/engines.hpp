// The two engines behind compile() (compiler.hpp) and what they share: the request's target
// and output, the intermediate files, the compile failure. Library-internal.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/compile/compiler.hpp"

namespace cudatool::detail {

// The output the request asks for: its own, else CUBIN for sm_XX and PTX for compute_XX.
OutputKind output_of(const CompileRequest& r);
// The architecture the compiler is asked for: PTX alone needs no real target.
Arch target_of(const CompileRequest& r);
// Whether nvcc compiles the user's file where it is (see CompileRequest::source_path): not
// for stdin or the extern "C" wrap, and not for a file whose name nvcc could not hand to its
// shell as plain text (a newline in it: process.hpp); those get a copy.
bool compiles_in_place(const CompileRequest& r);
// The source name as a file stem for intermediate files ("kernel" when nothing is left).
std::string stem_of(const std::string& name);
// The name as a #line string literal: quotes and backslashes escaped, control characters
// and bytes that are not UTF-8 replaced by '?' (a newline would end the directive).
std::string line_directive_name(const std::string& name);

// An intermediate file (--keep, nvcc's input): whole, or removed. A file system that
// refuses it (full, read-only) is the environment's problem, not the driver's: UsageError.
void write_intermediate(const std::filesystem::path& path, std::string_view data);

// CompileError "<source>: compilation failed (<compiler>, <target>): <first error line>".
[[noreturn]] void throw_compile_error(const CompileRequest& r, const std::string& log,
                                      const std::vector<std::string>& options,
                                      const std::string& compiler);

// NVRTC in-process (nvrtc_engine.cpp).
CompileResult compile_nvrtc(const CompileRequest& r);
// The NVRTC library's file: found by stat where possible (no loading), else the loaded one.
std::string nvrtc_library_file();

// nvcc as a child process (nvcc_engine.cpp).
CompileResult compile_nvcc(const CompileRequest& r);
// nvcc: CUDATOOL_NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, then PATH.
// Throws LibraryNotFoundError when there is none.
std::string find_nvcc();

}  // namespace cudatool::detail
