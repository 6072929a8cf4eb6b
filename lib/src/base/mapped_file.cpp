#include "cudatool/base/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw UsageError(path + ": " + (e == ENOENT ? std::string("no such file") : std::strerror(e)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw UsageError(path + ": " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UsageError(path + ": " + kind_of(st.st_mode) + ", not a file");
  }
  if (st.st_size == 0) {
    ::close(fd);
    throw UsageError(path + ": empty file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int e = errno;
  if (p == MAP_FAILED) {
    ::close(fd);
    throw UsageError(path + ": cannot map the file: " + std::strerror(e));
  }
  data_ = static_cast<const std::uint8_t*>(p);
  fd_ = fd;  // kept for copy()
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::copy(std::span<const std::uint8_t> range, std::uint8_t* into) const {
  const auto offset = static_cast<std::size_t>(range.data() - data_);
  if (data_ == nullptr || range.data() < data_ || offset > size_ || range.size() > size_ - offset)
    throw UsageError(path_ + ": a read outside the file");  // a caller's mistake, never input's
  if (fd_ < 0) {
    std::memcpy(into, range.data(), range.size());
    release(range);
    return;
  }
  std::size_t done = 0;
  while (done < range.size()) {
    const ssize_t n =
        ::pread(fd_, into + done, range.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      throw UsageError(path_ + ": cannot read " + std::to_string(range.size() - done) +
                       " bytes at offset " + std::to_string(offset + done) + ": " +
                       (n == 0 ? std::string("the file is shorter than when it was opened")
                               : std::string(std::strerror(e))));
    }
    done += static_cast<std::size_t>(n);
  }
}

void MappedFile::release(std::span<const std::uint8_t> range) const {
  if (data_ == nullptr || range.empty()) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<std::uintptr_t>(range.data());
  auto end = begin + range.size();
  const auto lo = reinterpret_cast<std::uintptr_t>(data_);
  const auto hi = lo + size_;
  if (begin < lo || end > hi) return;
  begin = (begin + page - 1) / page * page;
  end = end / page * page;
  if (end <= begin) return;
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void MappedFile::close_descriptor() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace cudatool
