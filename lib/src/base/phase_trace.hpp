// Where one process's time goes, for measuring it (a build with test hooks only): named
// steps, each with the milliseconds since the process's static objects were made,
// collected from any thread and printed as one line. The device cache's warm path
// (CUDATOOL_TEST_DEVICE_CACHE_TRACE) and the kernels scan (CUDATOOL_TEST_SCAN_TRACE) use it;
// bench/RESULTS.md quotes them.
#pragma once

#include <mutex>
#include <string>

namespace cudatool {

class PhaseTrace {
 public:
  // Traces where the test hook `variable` is set (read once, here).
  explicit PhaseTrace(const char* variable);
  bool on() const { return on_; }
  // Adds " what@12.3ms" where on.
  void step(const char* what);
  // The steps so far, and none after.
  std::string take();

 private:
  bool on_ = false;
  std::mutex mutex_;
  std::string steps_;
};

}  // namespace cudatool
