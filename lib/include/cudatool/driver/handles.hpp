// The CUDA driver's handles and values as the public headers name them, without <cuda.h>
// (a consumer needs no CUDA toolkit to build against cudatool). The handle types are
// cuda.h's own: cuda.h declares `typedef struct CUctx_st* CUcontext`, and the structs are
// declared here the same way, so ContextHandle is CUcontext for a consumer that includes
// cuda.h too. lib/src/driver/driver_api.hpp checks each against cuda.h at compile time.
#pragma once

// The driver's opaque structs (cuda.h declares them at global scope and never defines them).
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;

namespace cudatool {

using ContextHandle = CUctx_st*;           // CUcontext
using ModuleHandle = CUmod_st*;            // CUmodule
using FunctionHandle = CUfunc_st*;         // CUfunction
using DeviceHandle = int;                  // CUdevice (cuda.h: typedef int CUdevice_v1)
using DevicePointer = unsigned long long;  // CUdeviceptr on a 64-bit host

// A device attribute: the value of a CUdevice_attribute enumerator (cuda.h's enum has no
// fixed underlying type, so it cannot be declared without cuda.h). Not an int, so an
// attribute and a value are never confused; attributes.hpp names every one.
enum class DeviceAttribute : int {};

}  // namespace cudatool
