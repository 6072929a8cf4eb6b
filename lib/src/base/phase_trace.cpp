#include "base/phase_trace.hpp"

#include <chrono>
#include <cstdio>
#include <utility>

#include "cudatool/base/test_hooks.hpp"

namespace cudatool {
namespace {

// When the process's static objects were made: the origin of every trace's times.
const std::chrono::steady_clock::time_point process_origin = std::chrono::steady_clock::now();

}  // namespace

PhaseTrace::PhaseTrace(const char* variable) : on_(test_hook(variable) != nullptr) {}

void PhaseTrace::step(const char* what) {
  if (!on_) return;
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - process_origin)
          .count();
  char text[96];
  std::snprintf(text, sizeof text, " %s@%.1fms", what, ms);
  const std::lock_guard<std::mutex> lock(mutex_);
  steps_ += text;
}

std::string PhaseTrace::take() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(steps_, std::string());
}

}  // namespace cudatool
