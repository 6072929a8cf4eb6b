// A progress bar on stderr for work that reports (done, total), such as the scan of
// `kernels` (ScanOptions::progress): shown only once the work has run half a second, and
// cleared when it ends.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace cudatool::app {

class ScanProgress {
 public:
  // "reading 12/400 images [###...]".
  ScanProgress(const char* verb, const char* items)
      : verb_(verb), items_(items), start_(std::chrono::steady_clock::now()) {}

  void operator()(std::size_t done, std::size_t total) {
    if (total == 0) return;
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    if (!shown_ && (elapsed < std::chrono::milliseconds(500) || done == total)) return;
    shown_ = true;
    const int width = 30;
    const int filled = static_cast<int>(width * done / total);
    std::fprintf(stderr, "\r%s %zu/%zu %s [%s%s]", verb_, done, total, items_,
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - filled), '.').c_str());
    if (done == total) std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }

 private:
  const char* verb_;
  const char* items_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace cudatool::app
