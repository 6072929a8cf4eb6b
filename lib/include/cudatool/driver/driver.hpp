// The CUDA driver API is opened at run time (libcuda.so.1 by the system loader's search, or
// the file CUDATOOL_LIBCUDA names); no public header declares its entry points or includes
// <cuda.h>. The library's calls go through one checked wrapper, internal to the library
// (lib/src/driver/driver_api.hpp); a failure throws the error class that fits the CUresult
// (base/error.hpp).
#pragma once

#include <string>

namespace cudatool::driver {

// A CUDA version number as a name: 13000 -> "13.0", 12080 -> "12.8"; "" for 0 (unknown).
std::string format_cuda_version(int version);

}  // namespace cudatool::driver
