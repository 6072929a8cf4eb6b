// Internal: makes a context current on the calling thread for a scope and restores the
// one that was current before (cuCtxSetCurrent replaces the top of the thread's context
// stack, so the stack is as it was). Costs one cuCtxGetCurrent where it is current already.
#pragma once

#include <cuda.h>

#include "driver/driver_api.hpp"

namespace cudatool::detail {

class CurrentContext {
 public:
  explicit CurrentContext(CUcontext context) {
    CUDATOOL_CU(cuCtxGetCurrent, &previous_);
    if (previous_ != context) {
      CUDATOOL_CU(cuCtxSetCurrent, context);
      switched_ = true;
    }
  }
  ~CurrentContext() {
    if (!switched_) return;
    // Nothing to do about a failure in a destructor.
    const auto& api = driver::api();
    if (api.cuCtxSetCurrent) api.cuCtxSetCurrent(previous_);
  }
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

}  // namespace cudatool::detail
