// The CUresult of a failed driver call turned into the error hierarchy's class that fits it
// (lib/include/cudatool/base/error.hpp), named by the driver itself where it can.
#include <cuda.h>

#include "cudatool/base/error.hpp"
#include "driver/driver_api.hpp"

namespace cudatool {

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

}  // namespace cudatool
