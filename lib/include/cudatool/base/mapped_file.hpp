// A whole file mapped read-only into memory (mmap), for readers of large binaries: nothing
// is copied, and pages the reader is done with can be given back (release) so that the
// process's resident memory stays small. Only regular files are accepted; the file is
// opened with O_NONBLOCK so that a FIFO named by mistake never blocks.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace cudatool {

class MappedFile {
 public:
  // Throws UsageError naming the path: missing, unreadable, not a regular file (a
  // directory, a FIFO, a device), or empty.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  // Drops the whole pages inside `range` (a part of bytes()) from this process's memory;
  // reading them again faults them back in from the file.
  void release(std::span<const std::uint8_t> range) const;

 private:
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cudatool
