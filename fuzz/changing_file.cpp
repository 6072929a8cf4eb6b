// libFuzzer harness: `kernels` over a mapped file that changes while it is read (issue 20,
// items 1 and 2). The input is a script and a binary: one byte with the number of writes
// (low 4 bits), the writes (a 32-bit little-endian offset, taken modulo the file's size,
// and a byte), a 32-bit size to truncate the file to (none where it is not smaller), then
// the file. The file lives in a memfd and is scanned through its /proc/self/fd path (so
// through MappedFile, as a file on disk is), on one worker thread; the script runs twice
// at once: one write (or the truncation, last) after each image is read (on_image, in a
// fixed order), and all of it in a loop on another thread while the sections are
// classified and searched (any order). Whatever the timing, the scan must read the file
// or throw a UsageError: no SIGBUS, no sanitizer report.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/binary/kernel_scan.hpp"

namespace {

struct Write {
  std::uint64_t offset;
  std::uint8_t value;
};

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t writes_count = data[0] & 15;
  const std::size_t header = 1 + writes_count * 5 + 4;
  if (size <= header) return 0;
  const std::span<const std::uint8_t> file(data + header, size - header);
  std::vector<Write> writes;
  for (std::size_t i = 0; i < writes_count; ++i)
    writes.push_back({le32(data + 1 + i * 5) % file.size(), data[1 + i * 5 + 4]});
  const std::uint64_t truncate_to = le32(data + 1 + writes_count * 5);
  const bool truncates = truncate_to < file.size();

  const int fd = ::memfd_create("changing_file", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (::write(fd, file.data(), file.size()) != static_cast<ssize_t>(file.size())) {
    ::close(fd);
    return 0;
  }
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  const auto apply = [&](std::size_t step) {
    if (step < writes.size()) {
      if (::pwrite(fd, &writes[step].value, 1, static_cast<off_t>(writes[step].offset)) != 1)
        return;
    } else if (step == writes.size() && truncates) {
      if (::ftruncate(fd, static_cast<off_t>(truncate_to)) != 0) return;
    }
  };

  std::atomic<bool> done{false};
  std::thread writer([&] {
    // Each write and its undoing, over and over, while the scan runs (never the truncation:
    // it would end the race at once).
    for (std::size_t round = 0; !done.load(std::memory_order_relaxed) && round < 1000; ++round)
      for (const Write& w : writes) {
        const std::uint8_t value = round % 2 ? file[w.offset] : w.value;
        if (::pwrite(fd, &value, 1, static_cast<off_t>(w.offset)) != 1) return;
      }
  });
  cudatool::ScanOptions options;
  options.threads = 1;
  std::size_t step = 0;
  options.on_image = [&](const cudatool::ImageKernels&) { apply(step++); };
  try {
    (void)cudatool::scan_binaries({path}, options);
  } catch (const cudatool::UsageError&) {
  }
  done = true;
  writer.join();
  ::close(fd);
  return 0;
}
