// bench-pool's progress bar on stderr (drawn only where stderr is a terminal, and only once a
// run has lasted half a second), fed by the engine's progress callback.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>

#include "cudatool/bench/pool_benchmark.hpp"

namespace cudatool::app {

class ProgressBar {
 public:
  bench::Progress callback() {
    return [this](const bench::AllocatorResult& a, std::size_t index, std::size_t count,
                  double fraction) { draw(a, index, count, fraction); };
  }
  ~ProgressBar() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }

 private:
  void draw(const bench::AllocatorResult& a, std::size_t index, std::size_t count,
            double fraction) {
    std::lock_guard lock(m_);
    if (std::chrono::steady_clock::now() - start_ < std::chrono::milliseconds(500)) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(std::lround(fraction * kWidth));
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r\033[Kbench-pool %zu/%zu %-16s [%s] %3d%%", index + 1, count,
                 a.label.c_str(), bar.c_str(), static_cast<int>(std::lround(fraction * 100)));
    std::fflush(stderr);
    drawn_ = true;
  }
  std::mutex m_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool drawn_ = false;
};

}  // namespace cudatool::app
