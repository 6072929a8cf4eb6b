#include "exit_status.hpp"

#include <new>

#include "cudatool/base/error.hpp"

namespace cudatool::app {

ExitStatus exit_status_for(const std::exception& e) noexcept {
  // Most specific classes first: the tool's refinements derive from PyCUDA's classes.
  if (dynamic_cast<const UsageError*>(&e)) return ExitStatus::usage;
  if (dynamic_cast<const LibraryNotFoundError*>(&e)) return ExitStatus::no_driver;
  if (dynamic_cast<const DeviceNotFoundError*>(&e)) return ExitStatus::no_device;
  if (dynamic_cast<const RequirementError*>(&e)) return ExitStatus::no_device;
  if (dynamic_cast<const CompileError*>(&e)) return ExitStatus::compile_error;
  if (dynamic_cast<const MemoryError*>(&e)) return ExitStatus::out_of_memory;
  // An allocation that failed outside the places that name it (they throw MemoryError).
  if (dynamic_cast<const std::bad_alloc*>(&e)) return ExitStatus::out_of_memory;
  // Only a failed driver (or NVRTC) call is a CUDA error: it carries the call's result code.
  // Anything else of the hierarchy (a file-system failure, a broken invariant) is a failure.
  if (const auto* error = dynamic_cast<const Error*>(&e); error && error->code() != 0)
    return ExitStatus::cuda_error;
  if (dynamic_cast<const LaunchError*>(&e)) return ExitStatus::cuda_error;
  return ExitStatus::failure;
}

std::string_view exit_status_name(ExitStatus s) noexcept {
  switch (s) {
    case ExitStatus::success:
      return "success";
    case ExitStatus::failure:
      return "failure";
    case ExitStatus::usage:
      return "usage";
    case ExitStatus::no_driver:
      return "no_driver";
    case ExitStatus::no_device:
      return "no_device";
    case ExitStatus::cuda_error:
      return "cuda_error";
    case ExitStatus::compile_error:
      return "compile_error";
    case ExitStatus::out_of_memory:
      return "out_of_memory";
    case ExitStatus::mismatch:
      return "mismatch";
    case ExitStatus::check_failed:
      return "check_failed";
    case ExitStatus::unreadable_entry:
      return "unreadable_entry";
    case ExitStatus::incompatible:
      return "incompatible";
    case ExitStatus::needs_jit:
      return "needs_jit";
  }
  return "unknown";
}

}  // namespace cudatool::app
