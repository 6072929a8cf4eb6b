#include "cudatool/base/mapped_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "cudatool/base/error.hpp"

namespace cudatool {

// One live mapping in the SIGBUS handler's table: a lock-free list of entries that are
// never freed, only reused (the handler may walk it at any moment, from any thread).
struct MappedFile::Region {
  std::atomic<std::uintptr_t> begin{0}, end{0};  // 0, 0 while unused
  std::atomic<bool> faulted{false};
  std::atomic<bool> in_use{false};
  Region* next = nullptr;  // set before the entry is published, never changed after
};

namespace {

std::atomic<MappedFile::Region*> regions{nullptr};
struct sigaction previous_sigbus {};

std::uintptr_t page_size() {
  static const auto size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// A read of a mapped page past the file's end (it was truncated after it was mapped):
// zero pages over the rest of that mapping, the mapping marked faulted, and the read
// retried. Only async-signal-safe calls (atomics, mmap). Any other SIGBUS goes to the
// handler that was installed before, or takes its default action.
void on_sigbus(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  // si_code > 0: raised by the kernel for a fault (si_addr is the address); kill() and
  // raise() give SI_USER or SI_TKILL, whose si_addr means nothing.
  for (MappedFile::Region* r = info->si_code > 0 ? regions.load(std::memory_order_acquire)
                                                 : nullptr;
       r != nullptr; r = r->next) {
    const std::uintptr_t begin = r->begin.load(std::memory_order_acquire);
    const std::uintptr_t end = r->end.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= end) continue;
    const std::uintptr_t page = address / page_size() * page_size();
    const std::uintptr_t stop = (end + page_size() - 1) / page_size() * page_size();
    void* zeros = ::mmap(reinterpret_cast<void*>(page), stop - page, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zeros == MAP_FAILED) break;
    r->faulted.store(true, std::memory_order_release);
    errno = saved_errno;
    return;
  }
  errno = saved_errno;
  if (previous_sigbus.sa_flags & SA_SIGINFO) {
    if (previous_sigbus.sa_sigaction != nullptr) {
      previous_sigbus.sa_sigaction(signal, info, context);
      return;
    }
  } else if (previous_sigbus.sa_handler != SIG_DFL && previous_sigbus.sa_handler != SIG_IGN) {
    previous_sigbus.sa_handler(signal);
    return;
  }
  // The default action, as without this handler: the signal raised again is blocked until
  // this returns, then kills the process (a fault would also repeat).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigemptyset(&default_action.sa_mask);
  ::sigaction(SIGBUS, &default_action, nullptr);
  ::raise(SIGBUS);
}

void install_sigbus_handler() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    ::sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &previous_sigbus);
  });
}

MappedFile::Region* claim_region(const void* data, std::size_t size) {
  install_sigbus_handler();
  MappedFile::Region* r = regions.load(std::memory_order_acquire);
  for (; r != nullptr; r = r->next) {
    bool unused = false;
    if (r->in_use.compare_exchange_strong(unused, true, std::memory_order_acq_rel)) break;
  }
  if (r == nullptr) {
    r = new MappedFile::Region;  // never freed: the handler may be reading it
    r->in_use.store(true, std::memory_order_relaxed);
    r->next = regions.load(std::memory_order_relaxed);
    while (!regions.compare_exchange_weak(r->next, r, std::memory_order_acq_rel)) {
    }
  }
  r->faulted.store(false, std::memory_order_relaxed);
  r->end.store(reinterpret_cast<std::uintptr_t>(data) + size, std::memory_order_release);
  r->begin.store(reinterpret_cast<std::uintptr_t>(data), std::memory_order_release);
  return r;
}

void free_region(MappedFile::Region* r) {
  if (r == nullptr) return;
  r->begin.store(0, std::memory_order_release);
  r->end.store(0, std::memory_order_release);
  r->in_use.store(false, std::memory_order_release);
}

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

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
    throw InputError(path + ": empty file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  device_ = st.st_dev;
  inode_ = st.st_ino;
  mtime_ns_ = mtime_ns(st);
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int e = errno;
  ::close(fd);
  if (p == MAP_FAILED) throw UsageError(path + ": cannot map the file: " + std::strerror(e));
  data_ = static_cast<const std::uint8_t*>(p);
  region_ = claim_region(data_, size_);
}

void MappedFile::unmap() noexcept {
  free_region(std::exchange(region_, nullptr));
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

MappedFile::~MappedFile() {
  unmap();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      region_(std::exchange(other.region_, nullptr)),
      device_(other.device_),
      inode_(other.inode_),
      mtime_ns_(other.mtime_ns_) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    region_ = std::exchange(other.region_, nullptr);
    device_ = other.device_;
    inode_ = other.inode_;
    mtime_ns_ = other.mtime_ns_;
  }
  return *this;
}

void MappedFile::release(std::span<const std::uint8_t> range) const {
  if (data_ == nullptr || range.empty()) return;
  const auto page = page_size();
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

bool MappedFile::changed() const {
  if (region_ != nullptr && region_->faulted.load(std::memory_order_acquire)) return true;
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return false;  // removed: the mapped file is whole
  if (st.st_dev != device_ || st.st_ino != inode_) return false;  // replaced by another file
  return static_cast<std::uint64_t>(st.st_size) != size_ || mtime_ns(st) != mtime_ns_;
}

void MappedFile::check_unchanged() const {
  if (!changed()) return;
  throw InputError(path_ +
                   ": the file changed while it was read (truncated or written to): read it "
                   "again once nothing writes it");
}

}  // namespace cudatool
