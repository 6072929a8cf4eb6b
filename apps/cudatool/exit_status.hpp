// The exit codes of the cudatool executable: one table for the whole tool (README and
// cudatool(1) document it), and the one place where the library's errors (its hierarchy,
// cudatool/base/error.hpp) map onto it. The app's, not the library's: a program using
// libcudatool chooses its own.
#pragma once

#include <exception>
#include <string_view>

namespace cudatool::app {

enum class ExitStatus : int {
  success = 0,
  failure = 1,        // an unexpected internal error
  usage = 2,          // bad flag, argument, environment variable or input file
  no_driver = 3,      // libcuda.so.1 (or NVRTC for compile) missing or too old
  no_device = 4,      // no visible device, no such device, or a requirement unmet
  cuda_error = 5,     // a CUDA driver call failed
  compile_error = 6,  // the kernel did not compile
  out_of_memory = 7,  // device, page-locked or host memory exhausted
  mismatch = 8,       // a self-check found a difference (compile --load)
  check_failed = 9,   // `cudatool check`: a check failed (or, with --strict, warned)
  // `kernels`: every file was read, but some CUDA images inside could not be (damaged or of
  // an unknown form); the others were reported.
  unreadable_entry = 10,
  // `compat`: some code cannot run on a target GPU (no code for it, PTX too new for the
  // driver, JIT disabled, a CUDA runtime newer than the driver).
  incompatible = 11,
  // `compat --require native`: all can run, but some only by JIT-compiling PTX.
  needs_jit = 12,
};

constexpr int to_int(ExitStatus s) {
  return static_cast<int>(s);
}

// The exit status for an exception thrown by the library (or anything else).
ExitStatus exit_status_for(const std::exception& e) noexcept;

// Short name of a status ("usage", "no_driver", ...), as used in JSON error objects.
std::string_view exit_status_name(ExitStatus s) noexcept;

}  // namespace cudatool::app
