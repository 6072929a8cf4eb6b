// A whole file mapped read-only into memory (mmap), for readers of large binaries: nothing
// is copied, and pages the reader is done with can be given back (release) so that the
// process's resident memory stays small. Only regular files are accepted; the file is
// opened with O_NONBLOCK so that a FIFO named by mistake never blocks.
//
// The file may change while it is read (`cp` over a library during a scan truncates it and
// writes it again): reading a mapped page past the new end raises SIGBUS. A process-wide
// SIGBUS handler, installed with the first mapping, maps zero pages over the rest of the
// mapping that faulted and marks it changed, so the read goes on over zeros instead of the
// process dying; SIGBUS elsewhere goes to the handler that was there before (or kills the
// process as it would have). Readers must therefore treat the bytes as input that may
// change between two reads (read what they classify once), and the caller asks
// check_unchanged() once it is done: it throws where a fault happened or the file's size
// or modification time moved since it was mapped, so that nothing read from a changed
// file is reported.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace cudatool {

class MappedFile {
 public:
  // Throws UsageError naming the path: missing, unreadable, not a regular file (a
  // directory, a FIFO, a device); InputError where it is empty.
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

  // Whether the file changed since it was mapped: a read past its new end faulted, or its
  // size or modification time differs (the path naming another file now is no change:
  // the mapped one is still whole).
  bool changed() const;
  // Throws InputError "<path>: the file changed while it was read (...)" where changed().
  void check_unchanged() const;

  struct Region;  // the mapping's entry in the SIGBUS handler's table (mapped_file.cpp)

 private:
  void unmap() noexcept;

  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  Region* region_ = nullptr;
  std::uint64_t device_ = 0, inode_ = 0;
  std::int64_t mtime_ns_ = 0;
};

}  // namespace cudatool
