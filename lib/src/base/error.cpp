#include "cudatool/base/error.hpp"

#include <cuda.h>

#include "cudatool/base/exit_status.hpp"
#include "cudatool/driver/driver.hpp"

namespace cudatool {
namespace {

std::string compose(const std::string& call, const std::string& name, const std::string& msg) {
  std::string what = call + " failed: " + name;
  if (!msg.empty()) what += " (" + msg + ")";
  return what;
}

}  // namespace

Error::Error(std::string call, int code, std::string code_name, std::string message)
    : std::runtime_error(compose(call, code_name, message)),
      call_(std::move(call)),
      code_(code),
      code_name_(std::move(code_name)),
      driver_message_(std::move(message)) {}

void throw_driver_error(const char* call, int code) {
  std::string name = "CUresult " + std::to_string(code);
  std::string message;
  try {
    const driver::Api& a = driver::api();
    const char* text = nullptr;
    if (a.cuGetErrorName && a.cuGetErrorName(static_cast<CUresult>(code), &text) == CUDA_SUCCESS &&
        text)
      name = text;
    text = nullptr;
    if (a.cuGetErrorString &&
        a.cuGetErrorString(static_cast<CUresult>(code), &text) == CUDA_SUCCESS && text)
      message = text;
  } catch (const Error&) {
    // No driver to name the result: the number stands alone.
  }
  switch (static_cast<CUresult>(code)) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      throw MemoryError(call, code, name, message);
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING:
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
      throw LaunchError(call, code, name, message);
    case CUDA_ERROR_NO_DEVICE:
      throw DeviceNotFoundError(call, code, name, message);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_CONTEXT_ALREADY_CURRENT:
    case CUDA_ERROR_CONTEXT_ALREADY_IN_USE:
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_SOURCE:
    case CUDA_ERROR_INVALID_PTX:
      throw LogicError(call, code, name, message);
    default:
      throw RuntimeError(call, code, name, message);
  }
}

ExitStatus exit_status_for(const std::exception& e) noexcept {
  // Most specific classes first: the tool's refinements derive from PyCUDA's classes.
  if (dynamic_cast<const UsageError*>(&e)) return ExitStatus::usage;
  if (dynamic_cast<const LibraryNotFoundError*>(&e)) return ExitStatus::no_driver;
  if (dynamic_cast<const DeviceNotFoundError*>(&e)) return ExitStatus::no_device;
  if (dynamic_cast<const RequirementError*>(&e)) return ExitStatus::no_device;
  if (dynamic_cast<const CompileError*>(&e)) return ExitStatus::compile_error;
  if (dynamic_cast<const MemoryError*>(&e)) return ExitStatus::out_of_memory;
  if (dynamic_cast<const Error*>(&e)) return ExitStatus::cuda_error;
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
  }
  return "unknown";
}

}  // namespace cudatool
