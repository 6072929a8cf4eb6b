// The pool benchmark's tests share one small host-backend configuration (the engine, its
// settings and its workloads are tested in three files).
#pragma once

#include "cudatool/bench/pool_benchmark.hpp"

namespace cudatool::bench::test_support {

inline Config host_config() {
  Config c;
  c.backend = Backend::host;
  c.iterations = 2000;
  c.warmup = 100;
  return c;
}

}  // namespace cudatool::bench::test_support
