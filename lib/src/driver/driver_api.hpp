// Internal: the CUDA driver API, opened at run time. libcuda.so.1 is found by the system loader's
// search (never the toolkit's stubs directory, whose libcuda.so fails every call); the
// environment variable CUDATOOL_LIBCUDA names another file instead (tests use it for a
// fake driver and for "no driver"). Entry points are resolved once, by the exact symbol
// the cuda.h we compiled with declares (dlsym of cuDeviceTotalMem_v2 for
// cuDeviceTotalMem), so each one has that declaration's ABI.
//
// Every call goes through CUDATOOL_CU, the one checked wrapper: a failure throws the
// error class that fits the CUresult (error.hpp), naming the call, the result's name and
// the driver's message.
//
// Library-only (never installed): the public headers name the driver's handles through
// cudatool/driver/handles.hpp, checked here against cuda.h. Beside the library, only the
// project's own GPU tests and tools/kernels_vs_driver include it (the cudatool_internals
// target), to ask the driver directly what the library answers.
#pragma once

#include <cuda.h>

#include <string>
#include <type_traits>

#include "cudatool/base/error.hpp"
#include "cudatool/driver/driver.hpp"
#include "cudatool/driver/handles.hpp"

// handles.hpp declares cuda.h's types without cuda.h: they must be the same.
static_assert(std::is_same_v<cudatool::ContextHandle, CUcontext>);
static_assert(std::is_same_v<cudatool::ModuleHandle, CUmodule>);
static_assert(std::is_same_v<cudatool::FunctionHandle, CUfunction>);
static_assert(std::is_same_v<cudatool::DeviceHandle, CUdevice>);
static_assert(std::is_same_v<cudatool::DevicePointer, CUdeviceptr>);

// Every driver entry point cudatool uses. Names are the cuda.h API names; where cuda.h
// maps one to a versioned symbol (cuDeviceTotalMem -> cuDeviceTotalMem_v2), the member
// below has the versioned type and is resolved by the versioned symbol.
#define CUDATOOL_DRIVER_FUNCTIONS(X)                      \
  X(cuInit)                                               \
  X(cuDriverGetVersion)                                   \
  X(cuGetErrorName)                                       \
  X(cuGetErrorString)                                     \
  X(cuDeviceGetCount)                                     \
  X(cuDeviceGet)                                          \
  X(cuDeviceGetName)                                      \
  X(cuDeviceGetUuid)                                      \
  X(cuDeviceTotalMem)                                     \
  X(cuDeviceGetAttribute)                                 \
  X(cuDeviceGetPCIBusId)                                  \
  X(cuDeviceGetByPCIBusId)                                \
  X(cuDeviceCanAccessPeer)                                \
  X(cuDevicePrimaryCtxRetain)                             \
  X(cuDevicePrimaryCtxRelease)                            \
  X(cuDevicePrimaryCtxGetState)                           \
  X(cuCtxSetCurrent)                                      \
  X(cuCtxGetCurrent)                                      \
  X(cuCtxPushCurrent)                                     \
  X(cuCtxPopCurrent)                                      \
  X(cuCtxSynchronize)                                     \
  X(cuMemGetInfo)                                         \
  X(cuMemAlloc)                                           \
  X(cuMemFree)                                            \
  X(cuMemHostAlloc)                                       \
  X(cuMemFreeHost)                                        \
  X(cuMemAllocAsync)                                      \
  X(cuMemFreeAsync)                                       \
  X(cuMemsetD8)                                           \
  X(cuMemsetD8Async)                                      \
  X(cuMemcpyHtoD)                                         \
  X(cuMemcpyDtoH)                                         \
  X(cuMemcpyHtoDAsync)                                    \
  X(cuMemcpyDtoHAsync)                                    \
  X(cuMemcpyDtoDAsync)                                    \
  X(cuMemcpyPeerAsync)                                    \
  X(cuCtxEnablePeerAccess)                                \
  X(cuDeviceGetDefaultMemPool)                            \
  X(cuMemPoolSetAttribute)                                \
  X(cuMemPoolTrimTo)                                      \
  X(cuStreamCreate)                                       \
  X(cuStreamDestroy)                                      \
  X(cuStreamSynchronize)                                  \
  X(cuEventCreate)                                        \
  X(cuEventRecord)                                        \
  X(cuEventSynchronize)                                   \
  X(cuEventElapsedTime)                                   \
  X(cuEventDestroy)                                       \
  X(cuModuleLoadDataEx)                                   \
  X(cuModuleUnload)                                       \
  X(cuModuleGetFunction)                                  \
  X(cuModuleGetFunctionCount)                             \
  X(cuModuleEnumerateFunctions)                           \
  X(cuFuncGetName)                                        \
  X(cuFuncLoad)                                           \
  X(cuFuncGetAttribute)                                   \
  X(cuFuncSetAttribute)                                   \
  X(cuLaunchKernel)                                       \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags) \
  X(cuOccupancyMaxPotentialBlockSize)                     \
  X(cuOccupancyMaxActiveClusters)                         \
  X(cuOccupancyMaxPotentialClusterSize)

namespace cudatool {

// Throws the class that fits the CUresult `code` (MemoryError for out-of-memory,
// LaunchError for launch failures, LogicError for misuse, DeviceNotFoundError for "no
// device", RuntimeError otherwise), naming `call`.
[[noreturn]] void throw_driver_error(const char* call, int code);

}  // namespace cudatool

namespace cudatool::driver {

struct Api {
#define CUDATOOL_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  CUDATOOL_DRIVER_FUNCTIONS(CUDATOOL_DRIVER_MEMBER)
#undef CUDATOOL_DRIVER_MEMBER
  std::string library_path;  // the file that was opened
  int driver_version = 0;    // cuDriverGetVersion: 13000 for CUDA 13.0
};

// The loaded library with its entry points resolved; does not call cuInit. Throws
// LibraryNotFoundError when the library is missing.
const Api& api();

// api(), plus cuInit(0) once per process. Throws LibraryNotFoundError for no driver (or
// the toolkit's stub), DeviceNotFoundError when no device is visible, or the error of the
// failed cuInit; the same error on every later call.
const Api& initialized();

// The process's environment when cuInit was called (what the driver enumerated under: a
// CUDA_VISIBLE_DEVICES set later changes nothing in this process), or nullptr before.
const std::vector<std::string>* start_environment();

[[noreturn]] void throw_missing_entry_point(const char* name);

// The one checked wrapper: calls `fn` and throws for anything but CUDA_SUCCESS.
template <class Fn, class... Args>
void checked(const char* name, Fn fn, Args... args) {
  if (fn == nullptr) throw_missing_entry_point(name);
  const CUresult result = fn(args...);
  if (result != CUDA_SUCCESS) throw_driver_error(name, static_cast<int>(result));
}

// The same call returning the CUresult, for the few places where a failure is an answer
// (an attribute the driver rejects is left out, not an error). Still throws when the
// entry point is missing.
template <class Fn, class... Args>
CUresult unchecked(const char* name, Fn fn, Args... args) {
  if (fn == nullptr) throw_missing_entry_point(name);
  return fn(args...);
}

}  // namespace cudatool::driver

// CUDATOOL_CU(cuDeviceGetName, buf, len, dev): a checked driver call (driver initialised).
#define CUDATOOL_CU(fn, ...) \
  ::cudatool::driver::checked(#fn, ::cudatool::driver::initialized().fn __VA_OPT__(, ) __VA_ARGS__)
// The CUresult of a driver call, for calls whose failure is an answer.
#define CUDATOOL_CU_RESULT(fn, ...)  \
  ::cudatool::driver::unchecked(#fn, \
                                ::cudatool::driver::initialized().fn __VA_OPT__(, ) __VA_ARGS__)
