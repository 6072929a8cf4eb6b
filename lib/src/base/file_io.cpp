#include "cudatool/base/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "cudatool/base/error.hpp"

namespace cudatool::detail {

std::optional<std::string> read_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string data;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    data.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return data;
}

}  // namespace cudatool::detail

namespace cudatool {

// Writes `data` to `path` through a temporary file in the same directory and a rename:
// the file is whole or untouched.
void write_atomically(const std::filesystem::path& path, std::string_view data) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path temporary = path.string() + ".tmp." + std::to_string(::getpid()) +
                                          "." + std::to_string(counter.fetch_add(1));
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("-o " + path.string() + ": cannot write: " + std::strerror(errno));
  std::size_t written = 0;
  int error = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    throw UsageError("-o " + path.string() + ": cannot write: " + std::strerror(error));
  }
}

}  // namespace cudatool
